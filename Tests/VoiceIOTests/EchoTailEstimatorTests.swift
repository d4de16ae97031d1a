import Foundation
import Testing
import VoiceIO

@Suite("Echo tail estimation from a filter's impulse response")
struct EchoTailEstimatorTests {
    static let rate = 16000
    static let block = 160
    static let scale: Float = 32767 * 320

    /// `count` taps (200 ms): noise decaying by `reverberationSeconds` (RT60), plus a flat floor at `floor`.
    static func taps(reverberationSeconds: Double, floor: Float, count: Int = 3200) -> [Int32] {
        var noise = EchoSceneFixture.Noise(state: 5)
        return (0..<count).map { n in
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

    /// A room of RT60 0.45 s past a 200 ms filter leaves a tail about 27 dB under the filter's energy: under the −20 dB
    /// a tail counts from by itself, it counts where the filter leaves no more than four times as much (here −23 dB),
    /// and not where the filter leaves −10 dB. One of RT60 0.38 s (−31.5 dB) counts under a filter that leaves −27 dB,
    /// 1.5 dB over a quarter of it (it did not while the floor was −30 dB); one 36 dB down (RT60 0.33 s) never counts,
    /// however little is left.
    @Test func countsATailFromAQuarterOfWhatTheFilterLeaves() {
        let room = Self.taps(reverberationSeconds: 0.45, floor: 0), shortRoom = Self.taps(reverberationSeconds: 0.33, floor: 0)
        let fainterTailRoom = Self.taps(reverberationSeconds: 0.38, floor: 0)
        func pastEnd(_ taps: [Int32], leftover: Float?) -> Float {
            var estimator = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
            taps.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale, filterLeftoverShare: leftover) }
            return estimator.energyPastEnd
        }
        #expect(pastEnd(room, leftover: nil) == 0)
        #expect(pastEnd(room, leftover: 0.1) == 0)
        #expect(pastEnd(room, leftover: 0.005) > 0)
        #expect(pastEnd(fainterTailRoom, leftover: 0.002) > 0)
        #expect(pastEnd(fainterTailRoom, leftover: 0.01) == 0)
        #expect(pastEnd(shortRoom, leftover: 0.0001) == 0)
    }

    /// A filter grown from 200 to 400 ms: while its new taps are still zero, the tail starts at the old end as the
    /// last fit had it; once they hold the room's decay, it is gone but for what they hold short of the fit. Without
    /// `filterGrew` the zero taps read as no tail at all.
    @Test func aGrownFilterKeepsTheTailItHasNotLearned() {
        var estimator = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        let room = Self.taps(reverberationSeconds: 0.8, floor: 0, count: 6400)
        room[..<3200].withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        let (shorterEnergy, shorterDecay) = (estimator.energyPastEnd, estimator.decayPerBlock)
        #expect(shorterEnergy > 0 && estimator.tailStartBlocks == 20)
        estimator.filterGrew(fromBlocks: 20)
        let unlearned = Array(room[..<3200]) + [Int32](repeating: 0, count: 3200)
        unlearned.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.tailStartBlocks == 20 && estimator.decayPerBlock == shorterDecay)
        #expect(abs(estimator.energyPastEnd / shorterEnergy - 1) < 0.01, "energy past end \(estimator.energyPastEnd)")
        let halfLearned = Array(room[..<3200]) + room[3200...].map { $0 / 2 }
        halfLearned.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(abs(estimator.energyPastEnd / shorterEnergy - 0.75) < 0.1, "energy past end \(estimator.energyPastEnd)")
        room.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.energyPastEnd < shorterEnergy / 10, "energy past end \(estimator.energyPastEnd)")

        var control = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        room[..<3200].withUnsafeBufferPointer { control.update(taps: $0, scale: Self.scale) }
        unlearned.withUnsafeBufferPointer { control.update(taps: $0, scale: Self.scale) }
        #expect(control.energyPastEnd == 0 && control.tailStartBlocks == 40)
    }

    /// A 0.5 s room's tail past 200 ms holds about 0.4 % of the energy, under the share `energyPastEnd` counts: no late
    /// tail while the filter does not grow. Grown for it, the filter's new taps start from zero, and that fit stands
    /// for them until they learn it.
    @Test func aGrownFilterKeepsEvenATailUnderTheSignificantShare() {
        var estimator = EchoTailEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        let room = Self.taps(reverberationSeconds: 0.5, floor: 0, count: 3200)
        room.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.energyPastEnd == 0 && estimator.fittedTailShare > 0.001)
        estimator.filterGrew(fromBlocks: 20)
        let unlearned = room + [Int32](repeating: 0, count: 3200)
        unlearned.withUnsafeBufferPointer { estimator.update(taps: $0, scale: Self.scale) }
        #expect(estimator.energyPastEnd > 0 && estimator.tailStartBlocks == 20)
    }
}
