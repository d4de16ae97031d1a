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
    static func fitsUntilFound(_ fits: [(seconds: Double, tailDecibels: Float)], farEndHeardAlone: Bool = true)
        -> Int? {
        var watch = LongRoomWatch(sampleRate: rate, blockFrameCount: block)
        for (index, fit) in fits.enumerated() {
            let decay = EchoTailEstimator.decayPerBlock(reverberationSeconds: fit.seconds, sampleRate: rate,
                                                        blockFrameCount: block)
            watch.observe(decayPerBlock: decay, tailShare: share(decibels: fit.tailDecibels),
                          isFarEndHeardAlone: farEndHeardAlone)
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
        // A filter that did not learn (no far end alone since the last fit) repeats its fit: that proves nothing.
        #expect(Self.fitsUntilFound(hall, farEndHeardAlone: false) == nil)
    }

    /// A reverberant hall of 0.8 s (our reverberant scenes' r08 reads 0.73 s) is a long room too, and the watch reads its
    /// reverberation time back from the fit that found it; a steady fit of 1.2 s at −18 dB is past the rooms believed.
    @Test func findsAReverberantHallAndReadsItsReverberation() {
        var watch = LongRoomWatch(sampleRate: Self.rate, blockFrameCount: Self.block)
        #expect(watch.reverberationSeconds == nil)
        let decay = EchoTailEstimator.decayPerBlock(reverberationSeconds: 0.8, sampleRate: Self.rate,
                                                    blockFrameCount: Self.block)
        for _ in 0..<6 {
            watch.observe(decayPerBlock: decay, tailShare: Self.share(decibels: -18), isFarEndHeardAlone: true)
        }
        #expect(watch.roomOutlastsFilter)
        #expect(abs((watch.reverberationSeconds ?? 0) - 0.8) < 0.001)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 1.2, tailDecibels: -18), count: 10)) == nil)
    }

    /// A loudspeaker far across a 0.8 s hall leaves the 200 ms filter so much misadjustment that its fits read
    /// 1.5-1.6 s at −9 to −10 dB (`HallDoubleTalkTests`): a tail that loud is a room's. Not so the moved path of our
    /// dt-change t07 (0.84-1.04 s at −19 to −20 dB, fit after fit for 3 s) and the drifting clipped microphone of
    /// hot-microphone g08 (0.9-1.2 s at −23 to −25 dB), nor a loud tail slower than 2 s.
    @Test func aSlowFitWithALoudTailIsAFarLoudspeakersHall() {
        let farHall: [(seconds: Double, tailDecibels: Float)] = [
            (1.56, -10.4), (1.50, -10.4), (1.51, -10.2), (1.51, -10.2), (1.45, -10.3), (1.58, -9.5)]
        #expect(Self.fitsUntilFound(farHall) == 6)
        let moved: [(seconds: Double, tailDecibels: Float)] = [
            (0.84, -19.6), (0.86, -19.6), (0.94, -18.6), (1.0, -18.6), (1.04, -18.9), (0.99, -19.8)]
        #expect(Self.fitsUntilFound(moved) == nil)
        let drifting: [(seconds: Double, tailDecibels: Float)] = [
            (0.9, -25.3), (0.99, -25.0), (1.0, -25.3), (1.2, -23.0), (1.15, -23.2), (1.17, -23.1), (1.08, -23.7),
            (0.91, -24.5), (0.95, -24.4)]
        #expect(Self.fitsUntilFound(drifting) == nil)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 2.5, tailDecibels: -9), count: 10)) == nil)
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
    /// decays as a reverberation of 1-3 s however steady it is, and is a room only as loud as a far loudspeaker's hall
    /// leaves it (`aSlowFitWithALoudTailIsAFarLoudspeakersHall`).
    @Test func aShortRoomOrAFloorIsNotALongRoom() {
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 0.4, tailDecibels: -30), count: 10)) == nil)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 1.5, tailDecibels: -18), count: 10)) == nil)
        #expect(Self.fitsUntilFound(Array(repeating: (seconds: 0.5, tailDecibels: -24), count: 10)) == 6)
    }
}
