import Foundation
import Testing
@testable import VoiceIO

@Suite struct DriftEstimatorTests {
    static let rate = 16000

    /// A speech-like far end and its echo drifting by `ppm` behind 80 ms, with noise; the far end silent over `pause`
    /// (seconds).
    static func driftingScene(ppm: Double, seconds: Double, pause: Range<Double>? = nil) -> (far: [Float], mic: [Float]) {
        let fixture = EchoSceneFixture(sampleRate: rate)
        var far = fixture.speechLike(seconds: seconds, seed: 31)
        if let pause {
            for i in Int(pause.lowerBound * Double(rate))..<Int(pause.upperBound * Double(rate)) { far[i] = 0 }
        }
        var mic = fixture.driftingEcho(far, bulkMilliseconds: 80, ppm: ppm, gain: 0.4)
        let noise = fixture.noise(count: mic.count, rms: 0.002, seed: 8)
        for i in mic.indices { mic[i] += noise[i] }
        return (far, mic)
    }

    /// Delay estimator and drift estimator over a drifting echo; returns the final drift estimate.
    static func estimateDrift(ppm: Double, seconds: Double) -> Double? {
        let (far, mic) = driftingScene(ppm: ppm, seconds: seconds)
        let delay = DelayEstimator(sampleRate: rate, blockFrameCount: 160)
        let drift = DriftEstimator(sampleRate: rate)
        DelayEstimatorTests.run(delay, far: far, mic: mic) { _, e in
            drift.process(delayFrames: e.fineDelayFrames, confidence: e.confidence, atFrame: e.processedFrameCount)
        }
        return drift.driftPPM
    }

    @Test(arguments: [200.0, -300.0])
    func estimatesDriftOver20Seconds(ppm: Double) throws {
        let found = try #require(Self.estimateDrift(ppm: ppm, seconds: 20))
        #expect(abs(found - ppm) <= 50, "found \(found) ppm for \(ppm)")
    }

    @Test func reportsNoDriftWhenClocksAgree() throws {
        let found = try #require(Self.estimateDrift(ppm: 0, seconds: 12))
        #expect(abs(found) <= 30)
    }

    /// Points on a line with a jump: the jump restarts the line instead of bending it.
    @Test func aJumpRestartsTheLine() throws {
        let drift = DriftEstimator(sampleRate: 1000)
        for ms in stride(from: 0, to: 30_000, by: 10) {
            let delay = 100.0 - 1e-4 * Double(ms) + (ms >= 15_000 ? 40 : 0)
            drift.process(delayFrames: delay, confidence: 1, atFrame: ms)
        }
        #expect(abs(try #require(drift.driftPPM) - 100) < 5)
    }

    /// The first lock lands a millisecond off (a neighbouring arrival, as at 8 kHz voice) and settles after
    /// three points: the step, under the jump limit, must not tilt the young line (through both sides, the line
    /// stayed too uncertain to publish for the whole 4 s, and then read a drift of the wrong sign).
    @Test func aSettlingFirstLockDoesNotTiltTheLine() throws {
        let drift = DriftEstimator(sampleRate: 1000)
        var found: Double?
        for ms in stride(from: 0, through: 4_000, by: 10) {
            let jitter = 0.02 * sin(Double(ms) * 0.0137)
            let delay = 95.0 + 5e-5 * Double(ms) + jitter + (ms < 750 ? 0.95 : 0)
            drift.process(delayFrames: delay, confidence: 1, atFrame: ms)
            found = drift.driftPPM ?? found
        }
        #expect(abs(try #require(found) - -50) < 15, "found \(found ?? .nan) ppm for -50")
    }

    /// A path that moved by a millisecond (under the 2 ms of a jump) is a step, not drift: drawn into the line it bent
    /// the line by 60-110 ppm in our dt-change scenes. Clocks 100 ppm apart, the arrival 1 ms later from 15 s.
    @Test func aSmallStepIsAPathChange() throws {
        let drift = DriftEstimator(sampleRate: 1000)
        var worst = 0.0
        for ms in stride(from: 0, to: 30_000, by: 10) {
            let jitter = 0.02 * sin(Double(ms) * 0.0137)
            let delay = 100.0 - 1e-4 * Double(ms) + jitter + (ms >= 15_000 ? 1 : 0)
            drift.process(delayFrames: delay, confidence: 1, atFrame: ms)
            if ms >= 3_000, let found = drift.driftPPM { worst = max(worst, abs(found - 100)) }
        }
        #expect(worst < 15, "drift off by \(worst) ppm")
        #expect(abs(try #require(drift.driftPPM) - 100) < 5)
    }

    /// After a jump (a moved path) the arrival wanders between reflections for a few seconds; the drift known from
    /// a long line stays until the new line spans as long (nil meanwhile: the aligner keeps compensating the old).
    /// Here the new arrival creeps 0.3 ms over its first second (300 ppm the wrong way) before it settles: a new line
    /// published after its first 2 s read that creep.
    @Test func aMovedPathKeepsTheKnownDrift() throws {
        let drift = DriftEstimator(sampleRate: 1000)
        var published: [Double] = [], kept: Double?
        for ms in stride(from: 0, to: 24_000, by: 10) {
            var delay = 100.0 - 1e-4 * Double(ms)
            if ms >= 12_000 { delay += 5 + 0.3 * min(Double(ms - 12_000), 1_000) / 1000 }
            drift.process(delayFrames: delay, confidence: 1, atFrame: ms)
            if ms < 12_000 { kept = drift.driftPPM }
            if ms >= 12_000, let found = drift.driftPPM { published.append(found) }
        }
        #expect(abs(try #require(kept) - 100) < 5)
        #expect(published.allSatisfy { abs($0 - 100) < 30 }, "published \(published.map { Int($0) }) after the move")
        #expect(drift.driftPPM != nil, "the new line never took over")
    }

    /// The arrival hops 1.2 ms to another reflection for 1.5 s and back (two arrivals of about the same strength): the
    /// line from before the hop is taken up again once the arrival is back on it, and its drift stays published. Without
    /// that, the hop restarted the line and, the line before it having spanned 10 s, no drift was published for 6 s.
    @Test func anArrivalThatHopsAndReturnsKeepsTheLine() throws {
        let drift = DriftEstimator(sampleRate: 1000)
        var unpublishedAfterTheReturn = 0
        for ms in stride(from: 0, to: 20_000, by: 10) {
            let jitter = 0.02 * sin(Double(ms) * 0.0137)
            let hop = (10_000..<11_500).contains(ms) ? -1.2 : 0
            drift.process(delayFrames: 100.0 - 1e-4 * Double(ms) + jitter + hop, confidence: 1, atFrame: ms)
            if ms >= 12_500 && drift.driftPPM == nil { unpublishedAfterTheReturn += 1 }
        }
        #expect(unpublishedAfterTheReturn == 0)
        #expect(abs(try #require(drift.driftPPM) - 100) < 5)
    }
}
