import Testing
@testable import VoiceIO

@Suite struct EchoAlignerTests {
    static let rate = 16000
    static let block = 160

    /// A drifting echo whose far end pauses: the aligner over it, block by block; returns the drift it compensates
    /// at each whole second.
    static func compensatedDrift(ppm: Double, seconds: Double, pause: Range<Double>) -> [Double?] {
        let (far, mic) = DriftEstimatorTests.driftingScene(ppm: ppm, seconds: seconds, pause: pause)
        let aligner = EchoAligner(sampleRate: rate, maximumBlockFrames: block)
        var perSecond: [Double?] = []
        observe(aligner, far: far, microphone: mic) { start in
            if (start + block) % rate == 0 { perSecond.append(aligner.driftPPM) }
        }
        return perSecond
    }

    /// Feeds `aligner` the scene block by block; `each` runs after every block with the block's first frame.
    static func observe(_ aligner: EchoAligner, far: [Float], microphone: [Float],
                        each: (_ start: Int) -> Void = { _ in }) {
        far.withUnsafeBufferPointer { f in
            microphone.withUnsafeBufferPointer { m in
                for start in stride(from: 0, through: f.count - block, by: block) {
                    aligner.observe(microphone: UnsafeBufferPointer(rebasing: m[start..<start + block]),
                                    reference: UnsafeBufferPointer(rebasing: f[start..<start + block]))
                    each(start)
                }
            }
        }
    }

    /// In a pause of the far end the delay estimator has nothing to search and keeps its last estimate: taken as
    /// fresh points, that estimate drew a flat stretch into the drift's line, and after a 4 s pause 200 ppm read as
    /// 157 (the public pump scene m04: the filter lost the shifted echo for the whole double talk that followed).
    @Test func aPauseOfTheFarEndKeepsTheDrift() throws {
        let drift = Self.compensatedDrift(ppm: 200, seconds: 20, pause: 12..<16)
        let beforePause = try #require(drift[11]), afterPause = try #require(drift[15])
        #expect(abs(beforePause - 200) <= 30, "before the pause \(beforePause) ppm")
        #expect(abs(afterPause - beforePause) <= 5, "after the pause \(afterPause) ppm, before it \(beforePause)")
    }

    /// Residuals measured downstream (`EchoPathSlide`) correct the drift by half of each, the line's estimate then no
    /// longer read.
    @Test func residualsTrimTheCompensatedDrift() throws {
        let (far, mic) = DriftEstimatorTests.driftingScene(ppm: 200, seconds: 16)
        let aligner = EchoAligner(sampleRate: Self.rate, maximumBlockFrames: Self.block)
        // The drift compensated every half second from 8 s, each time followed by the residual a filter finds for
        // clocks 230 ppm apart (taken from the next block on).
        var compensated: [Double] = []
        Self.observe(aligner, far: far, microphone: mic) { start in
            if start >= 8 * Self.rate, start % (Self.rate / 2) == 0, let ppm = aligner.driftPPM {
                compensated.append(ppm)
                aligner.trimDrift(byResidualPPM: 230 - ppm)
            }
        }
        let first = try #require(compensated.first), last = try #require(compensated.last)
        #expect(abs(first - 200) < 15, "the line's own estimate at 8 s: \(first) ppm")
        #expect(abs(last - 230) < 0.5,
                "after \(compensated.count) residuals: \(compensated.map { Int($0.rounded()) }) ppm")
    }

    /// Before the drift is known, and for clocks that agree (under 20 ppm), residuals are not taken.
    @Test func residualsWaitForADriftToTrim() {
        let (far, mic) = DriftEstimatorTests.driftingScene(ppm: 0, seconds: 8)
        let aligner = EchoAligner(sampleRate: Self.rate, maximumBlockFrames: Self.block)
        aligner.trimDrift(byResidualPPM: 80)
        #expect(aligner.driftPPM == nil)
        Self.observe(aligner, far: far, microphone: mic)
        let before = aligner.driftPPM ?? 0
        aligner.trimDrift(byResidualPPM: 80)
        #expect(abs(before) < 20 && aligner.driftPPM ?? 0 == before,
                "\(before) ppm trimmed to \(aligner.driftPPM ?? 0)")
    }

    /// A line that reads clocks that agree (under 20 ppm) leaves the delay where the first lock put it; one that reads
    /// more slides it. The arrival wanders between a room's reflections, and a line through it read a few ppm for clocks
    /// that agree: compensated, the reference slid under the filter, which followed a moving path instead of the room.
    @Test(arguments: [(ppm: 8.0, slides: false), (ppm: 60.0, slides: true)])
    func clocksThatAgreeLeaveTheDelayStill(ppm: Double, slides: Bool) throws {
        let (far, mic) = DriftEstimatorTests.driftingScene(ppm: ppm, seconds: 14)
        let aligner = EchoAligner(sampleRate: Self.rate, maximumBlockFrames: Self.block)
        var delayAtFourSeconds: Double?
        Self.observe(aligner, far: far, microphone: mic) { start in
            if start == 4 * Self.rate { delayAtFourSeconds = aligner.delayFrames }
        }
        let before = try #require(delayAtFourSeconds)
        // 8 ppm over the 10 s that follow is 1.3 frames at 16 kHz; 60 ppm, 9.6.
        let moved = before - aligner.delayFrames
        #expect(aligner.realignmentCount == 1, "\(aligner.realignmentCount) realignments")
        if slides {
            #expect(moved > 4, "the delay moved \(moved) frames; \(aligner.driftPPM ?? 0) ppm compensated")
        } else {
            #expect(moved == 0 && aligner.driftPPM == nil,
                    "the delay moved \(moved) frames; \(aligner.driftPPM ?? 0) ppm compensated")
        }
    }

    /// A residual that points at the line's estimate (within half of it either way) takes that estimate whole; one that
    /// points away is taken by half.
    @Test func aResidualThatAgreesWithTheLineTakesIt() throws {
        func aligner(thenResidual residual: (_ line: Double, _ compensated: Double) -> Double) throws
            -> (line: Double, compensated: Double) {
            let (far, mic) = DriftEstimatorTests.driftingScene(ppm: 200, seconds: 12)
            let aligner = EchoAligner(sampleRate: Self.rate, maximumBlockFrames: Self.block)
            var line = 0.0
            Self.observe(aligner, far: far, microphone: mic) { start in
                // At 10 s a first residual of 60 ppm (the line's estimate held since 8 s), at 11 s the next.
                if start == 10 * Self.rate, let ppm = aligner.driftPPM {
                    line = ppm
                    aligner.trimDrift(byResidualPPM: 60)
                } else if start == 11 * Self.rate, let ppm = aligner.driftPPM {
                    aligner.trimDrift(byResidualPPM: residual(line, ppm))
                }
            }
            return (line, try #require(aligner.driftPPM))
        }
        let agreeing = try aligner { line, compensated in 0.8 * (line - compensated) }
        #expect(abs(agreeing.compensated - agreeing.line) < 2, "\(agreeing)")
        let away = try aligner { _, _ in 10 }
        #expect(abs(away.compensated - (away.line + 30 + 5)) < 2, "\(away)")
    }
}
