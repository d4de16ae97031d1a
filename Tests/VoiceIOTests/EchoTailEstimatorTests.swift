import Foundation
import Testing
import VoiceIO

@Suite("Echo tail estimation from a filter's impulse response")
struct EchoTailEstimatorTests {
    static let rate = 16000
    static let block = 160
    static let scale: Float = 32767 * 320

    /// 200 ms of taps: noise decaying by `reverberationSeconds` (RT60), plus a flat floor at `floor`.
    static func taps(reverberationSeconds: Double, floor: Float) -> [Int32] {
        var noise = EchoSceneFixture.Noise(state: 5)
        return (0..<3200).map { n in
            let decay = Float(exp(-6.9 * Double(n) / (reverberationSeconds * Double(rate))))
            return Int32((0.1 * decay + floor) * noise.next() * scale)
        }
    }

    @Test func fitsTheDecayOfALongRoom() {
        var estimator = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        Self.taps(reverberationSeconds: 0.8, floor: 0).withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        let expected = Float(exp(-13.8 * 0.01 / 0.8))  // energy: 60 dB in 0.8 s
        #expect(abs(estimator.decayPerBlock - expected) < 0.02, "decay \(estimator.decayPerBlock) per block")
        // Energy of the block just past 200 ms: 0.1² · (decay at 200 ms)² · 160 taps · 1/3 (uniform noise).
        let pastEnd = 0.01 * Float(exp(-2 * 6.9 * 0.2 / 0.8)) * 160 / 3
        #expect(abs(10 * log10(estimator.energyPastEnd / pastEnd)) < 2, "energy past end \(estimator.energyPastEnd)")
    }

    @Test func ignoresAFlatFloorAndAShortRoom() {
        var estimator = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        Self.taps(reverberationSeconds: 0.01, floor: 0.001).withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.energyPastEnd == 0)
        Self.taps(reverberationSeconds: 0.15, floor: 0).withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.energyPastEnd == 0)
    }
}
