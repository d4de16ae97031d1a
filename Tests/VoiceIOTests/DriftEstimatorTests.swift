import Foundation
import Testing
@testable import VoiceIO

@Suite struct DriftEstimatorTests {
    static let rate = 16000

    /// Delay estimator and drift estimator over a drifting echo; returns the final drift estimate.
    static func estimateDrift(ppm: Double, seconds: Double) -> Double? {
        let fixture = EchoSceneFixture(sampleRate: rate)
        let far = fixture.speechLike(seconds: seconds, seed: 31)
        var mic = fixture.driftingEcho(far, bulkMilliseconds: 80, ppm: ppm, gain: 0.4)
        let noise = fixture.noise(count: mic.count, rms: 0.002, seed: 8)
        for i in mic.indices { mic[i] += noise[i] }
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
}
