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
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeBufferPointer { m in
                for start in stride(from: 0, through: f.count - block, by: block) {
                    aligner.observe(microphone: UnsafeBufferPointer(rebasing: m[start..<start + block]),
                                    reference: UnsafeBufferPointer(rebasing: f[start..<start + block]))
                    if (start + block) % rate == 0 { perSecond.append(aligner.driftPPM) }
                }
            }
        }
        return perSecond
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
}
