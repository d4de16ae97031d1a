#if canImport(Glibc)
import Glibc
#endif

/// Tells when the room rings past the linear filter by enough that a longer filter would cancel more: a hall whose
/// echo a 200 ms filter leaves at −20 to −24 dB, which caps the echo taken off in double talk, where the suppressor
/// must go gently (our public hall q03: 0.898 STOI).
///
/// It reads the `EchoTailEstimator`'s fits of the filter's impulse response. A long room gives a tail past the filter's
/// end of at least −26 dB of the filter's energy (`tailShare`), decaying as a reverberation of 0.44 to 1 s, and the
/// same fit, within 2 dB and 0.2 dB per block, over `steadyFitCount` fits made while the far end played alone. What
/// else looks like a tail does not hold still: a filter converging again after the path moved, or the misadjustment of
/// a filter under a drifting clock, reads −8 to −27 dB decaying as 0.6 to 3 s, wandering by 3 to 10 dB from one fit to
/// the next (our moved-path and drift scenes). A filter that did not learn at its step since the last fit (no far end,
/// or a near talker heard throughout) repeats its fit, which does not count: through the double talk of our
/// drift-change d01 (a 0.3 s room, 250 ppm) 5 ms blocks held fits of −26 to −24.5 dB at 0.55-0.6 s for 3 s, the filter
/// grew as the talker stopped, and the path's change 2 s later passed for a long room's unheard talker
/// (`UnexplainedOutputWatch`): 8.6 dB over the next half second. Rooms of 0.12 to 0.35 s leave −29 to −45 dB under a
/// 200 ms filter. The longest reverberation believed was 0.68 s until our reverberant scenes
/// (`eval/scenes-reverberant.json`) met rooms of 0.7 s, which a 200 ms filter leaves at −12 dB: there the double-talk
/// detector never heard a talker 5 dB under the echo (r08). A fit slower than 1 s, up to 2 s, is a room too where its
/// tail holds at least −15 dB of the filter's energy: a loudspeaker far across a hall of 0.8 s (its direct path weak)
/// left the 200 ms filter's output 10 dB under the microphone, the filter's late taps held that much misadjustment, and
/// their fit read 1.5-1.6 s at −9 to −10 dB, steady for seconds: the room went unfound, and a talker 3 dB under its
/// echo lost its first half second by 30 dB (`HallDoubleTalkTests`). The moved paths and drifting clocks whose fits
/// read 1 to 1.2 s, steady for 3 s, held −19 to −25 dB (our dt-change t07 after its move in double talk, hot-microphone
/// g08). The room's reverberation time, read from the fit that found it (`reverberationSeconds`), tells how long a
/// filter it needs (`EchoPipeline`).
///
/// Real-time safe throughout.
public struct LongRoomWatch {
    /// Whether the room was found to ring past the filter. It stays found.
    public private(set) var roomOutlastsFilter = false
    /// The room's reverberation time (RT60) in seconds, from the fit that found it (nil until then).
    public private(set) var reverberationSeconds: Double?
    private let fastestDecayPerBlock: Float, slowestDecayPerBlock: Float, slowestLoudTailDecayPerBlock: Float
    /// The rate and block the decays are per, which turn a decay into a reverberation time.
    private let sampleRate: Int, blockFrameCount: Int
    private var steadyFits = 0
    private var lowestTailDecibels: Float = 0, highestTailDecibels: Float = 0
    private var lowestDecayDecibels: Float = 0, highestDecayDecibels: Float = 0

    /// The tail past the filter a longer filter is for: −26 dB of the filter's energy.
    private static var tailShare: Float { 0.0025 }
    private static var believedReverberationSeconds: ClosedRange<Double> { 0.44...1 }
    /// The slowest fit believed where the tail past the filter holds at least `loudTailShare` (−15 dB).
    private static var slowestLoudTailSeconds: Double { 2 }
    private static var loudTailShare: Float { 0.03 }
    /// Fits in a row that must agree (half a second apart in `EchoPipeline`: 3 s).
    private static var steadyFitCount: Int { 6 }
    /// How far the fits in a steady run may spread: the tail's share in dB, the decay in dB per block.
    private static var tailSpreadDecibels: Float { 2 }
    private static var decaySpreadDecibels: Float { 0.2 }

    /// `blockFrameCount`: the blocks the estimator's decay is per.
    public init(sampleRate: Int, blockFrameCount: Int) {
        func decay(_ seconds: Double) -> Float {
            EchoTailEstimator.decayPerBlock(reverberationSeconds: seconds, sampleRate: sampleRate,
                                            blockFrameCount: blockFrameCount)
        }
        fastestDecayPerBlock = decay(Self.believedReverberationSeconds.lowerBound)
        slowestDecayPerBlock = decay(Self.believedReverberationSeconds.upperBound)
        slowestLoudTailDecayPerBlock = decay(Self.slowestLoudTailSeconds)
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
    }

    /// One fit of the estimator (`EchoTailEstimator.fittedDecayPerBlock`, `fittedTailShare`); `isFarEndHeardAlone`:
    /// the far end played with no near talker heard in some block since the last fit (the filter learned at its whole
    /// step).
    public mutating func observe(decayPerBlock: Float, tailShare: Float, isFarEndHeardAlone: Bool) {
        guard !roomOutlastsFilter, isFarEndHeardAlone else { return }
        let slowest = tailShare >= Self.loudTailShare ? slowestLoudTailDecayPerBlock : slowestDecayPerBlock
        guard decayPerBlock >= fastestDecayPerBlock, decayPerBlock <= slowest, tailShare >= Self.tailShare else {
            steadyFits = 0
            return
        }
        let tail = 10 * log10(tailShare), decay = 10 * log10(decayPerBlock)
        if steadyFits > 0 {
            lowestTailDecibels = min(lowestTailDecibels, tail); highestTailDecibels = max(highestTailDecibels, tail)
            lowestDecayDecibels = min(lowestDecayDecibels, decay); highestDecayDecibels = max(highestDecayDecibels, decay)
            let spread = highestTailDecibels - lowestTailDecibels > Self.tailSpreadDecibels
                || highestDecayDecibels - lowestDecayDecibels > Self.decaySpreadDecibels
            // Too spread: the run starts over from this fit.
            if spread { steadyFits = 0 }
        }
        if steadyFits == 0 {
            (lowestTailDecibels, highestTailDecibels) = (tail, tail)
            (lowestDecayDecibels, highestDecayDecibels) = (decay, decay)
        }
        steadyFits += 1
        roomOutlastsFilter = steadyFits >= Self.steadyFitCount
        if roomOutlastsFilter {
            reverberationSeconds = EchoTailEstimator.reverberationSeconds(decayPerBlock: decayPerBlock,
                                                                          sampleRate: sampleRate,
                                                                          blockFrameCount: blockFrameCount)
        }
    }
}
