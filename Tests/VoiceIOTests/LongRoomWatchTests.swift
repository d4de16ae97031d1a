import Foundation
import Testing
import VoiceIO

/// When the linear filter grows for a room that rings past it (`LongRoomWatch`), fed fits as `EchoTailEstimator`
/// makes them every half second: a decay per 10 ms block and the tail's share of the filter's energy.
@Suite struct LongRoomWatchTests {
    static let rate = 16000
    static let block = 160

    static func share(decibels: Float) -> Float { pow(10, decibels / 10) }

    /// Feeds `fits` (reverberation in s, tail in dB) and returns after how many the room was found (nil: never).
    static func fitsUntilFound(_ fits: [(seconds: Double, tailDecibels: Float)], farEndHeard: Bool = true) -> Int? {
        var watch = LongRoomWatch(sampleRate: rate, blockFrameCount: block)
        for (index, fit) in fits.enumerated() {
            let decay = EchoTailEstimator.decayPerBlock(reverberationSeconds: fit.seconds, sampleRate: rate,
                                                        blockFrameCount: block)
            watch.observe(decayPerBlock: decay, tailShare: share(decibels: fit.tailDecibels), isFarEndHeard: farEndHeard)
            if watch.roomOutlastsFilter { return index + 1 }
        }
        return nil
    }

    /// The public hall q03's fits under a 200 ms filter: −20 to −21 dB, 0.55-0.6 s, fit after fit.
    @Test func findsAHallThatHoldsStillForThreeSeconds() {
        let hall: [(seconds: Double, tailDecibels: Float)] = (0..<10).map { index in
            let seconds = 0.55 + 0.01 * Double(index % 3)
            return (seconds, Float(index % 2) - 21)
        }
        #expect(Self.fitsUntilFound(hall) == 6)
        // A frozen filter (no far end since the last fit) repeats its fit: that proves nothing.
        #expect(Self.fitsUntilFound(hall, farEndHeard: false) == nil)
    }

    /// A reverberant hall of 0.8 s (our reverberant scenes' r08 reads 0.73 s) is a long room too, and the watch reads its
    /// reverberation time back from the fit that found it; a steady fit of 1.2 s is past the rooms believed.
    @Test func findsAReverberantHallAndReadsItsReverberation() {
        var watch = LongRoomWatch(sampleRate: Self.rate, blockFrameCount: Self.block)
        #expect(watch.reverberationSeconds == nil)
        let decay = EchoTailEstimator.decayPerBlock(reverberationSeconds: 0.8, sampleRate: Self.rate,
                                                    blockFrameCount: Self.block)
        for _ in 0..<6 { watch.observe(decayPerBlock: decay, tailShare: Self.share(decibels: -18), isFarEndHeard: true) }
        #expect(watch.roomOutlastsFilter)
        #expect(abs((watch.reverberationSeconds ?? 0) - 0.8) < 0.001)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 1.2, tailDecibels: -18), count: 10)) == nil)
    }

    /// Our drift scene d06 (a 0.35 s room, 200 ppm) and a path that just moved: the fits wander by 3-5 dB, their
    /// decay in and out of a long room's.
    @Test func aWanderingFitIsNotARoom() {
        let wandering: [(seconds: Double, tailDecibels: Float)] = [
            (0.65, -24), (0.67, -23), (0.67, -23), (1.0, -19), (1.0, -20), (0.75, -23), (0.67, -24), (0.86, -20),
            (0.86, -21), (0.6, -25), (0.6, -26), (0.55, -27), (0.67, -25), (0.67, -24), (0.86, -21)]
        #expect(Self.fitsUntilFound(wandering) == nil)
    }

    /// A room the 200 ms filter covers leaves a faint tail (−30 to −45 dB); a filter's misadjustment floor
    /// decays as a reverberation of 1-3 s however steady it is.
    @Test func aShortRoomOrAFloorIsNotALongRoom() {
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 0.4, tailDecibels: -30), count: 10)) == nil)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 1.5, tailDecibels: -18), count: 10)) == nil)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 0.5, tailDecibels: -24), count: 10)) == 6)
    }
}
