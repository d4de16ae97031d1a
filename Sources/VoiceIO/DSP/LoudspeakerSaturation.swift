/// A loudspeaker that saturates, modelled ahead of the linear echo filter (a Hammerstein model): the reference is
/// shaped by f(x) = x / (1 + c·(x/32768)⁴)^¼, a limiter whose knee sits at full scale / c^¼, and the filter learns
/// the room from f(x) rather than x. A clipping or soft-clipping loudspeaker's echo is the room's response to its
/// distorted output; a linear filter fed the clean reference left that distortion 7-14 dB under the echo in our
/// clip scenes, and the suppressor took it off, and the near talker with it in double talk.
///
/// c starts at 0 (f is the identity) and is learned by Gauss-Newton steps while the far end plays alone and the
/// filter holds the path: the filter's error e and z, the filter's response to ∂f/∂c (−x⁵/4 at c = 0, so learning
/// can start from a linear loudspeaker), are correlated over about half a second, and c moves by a share of
/// ⟨e·z⟩ / ⟨z·z⟩, but only while z explains a twentieth of the error's power or more, and the first step only
/// after it has done so for a quarter of a second without a break. A loudspeaker that does not saturate leaves
/// the correlation at chance, and c at 0: the filter's input is then the reference itself.
///
/// All methods are real-time safe.
struct LoudspeakerSaturation {
    /// c: the knee at full scale / c^¼ (0: no saturation).
    private(set) var kneeCoefficient: Float = 0
    /// ⟨e·z⟩, ⟨z·z⟩ and ⟨e·e⟩, smoothed over blocks.
    private var errorCorrelation: Float = 0
    private var derivativeEnergy: Float = 0
    private var errorEnergy: Float = 0
    /// Learning blocks in a row that passed the significance test.
    private var significantBlocks = 0

    /// Share of a block's sums taken into the smoothed ones (about half a second at 8-10 ms blocks).
    private static var smoothing: Float { 0.02 }
    /// Share of the Gauss-Newton step taken per block: half a step per smoothing time, so a step is not taken
    /// again on sums that still hold the error from before it.
    private static var step: Float { 0.01 }
    /// Share of the error's power that z must explain for c to move (its squared correlation with e).
    private static var significance: Float { 0.05 }
    /// Significant blocks in a row before the first step (a quarter of a second at 10 ms blocks): the error of a
    /// linear loudspeaker's filter under strong drift or a long delay passed the test by chance for a few blocks
    /// at a time, and c, once off 0, crept up to a knee at -1 to -3 dBFS (our drift-change scene d04: ERLE 40.9
    /// -> 38.6 dB); a saturating loudspeaker passes it for seconds.
    static var startBlockCount: Int { 25 }
    /// The largest c: a knee at a tenth of full scale.
    private static var largestKneeCoefficient: Float { 10_000 }

    /// The knee as a fraction of full scale, nil while it is at or above full scale (no saturation found).
    var kneeLevel: Float? {
        let level = 1 / kneeCoefficient.squareRoot().squareRoot()
        return level < 1 ? level : nil
    }

    /// f(x) and ∂f/∂c at x, in Int16 units.
    @inline(__always) func shape(_ sample: Float) -> (value: Float, derivative: Float) {
        let x = sample * (1 / 32768)
        let x2 = x * x, x4 = x2 * x2
        let onePlusU = 1 + kneeCoefficient * x4
        let root = onePlusU.squareRoot().squareRoot()
        // ∂f/∂c = −x⁵ / (4·(1 + c·x⁴)^(5/4)), in Int16 units.
        return (sample / root, -0.25 * sample * x4 / (onePlusU * root))
    }

    /// One block's learning: ⟨e·z⟩, ⟨z·z⟩ and ⟨e·e⟩ over the block, e the filter's error and z its response to
    /// ∂f/∂c. Call it only while the far end plays alone and the filter holds the path.
    mutating func learn(errorCorrelation blockCorrelation: Float, derivativeEnergy blockDerivativeEnergy: Float,
                        errorEnergy blockErrorEnergy: Float) {
        errorCorrelation += Self.smoothing * (blockCorrelation - errorCorrelation)
        derivativeEnergy += Self.smoothing * (blockDerivativeEnergy - derivativeEnergy)
        errorEnergy += Self.smoothing * (blockErrorEnergy - errorEnergy)
        guard derivativeEnergy > 0,
              errorCorrelation * errorCorrelation > Self.significance * derivativeEnergy * errorEnergy else {
            significantBlocks = 0
            return
        }
        significantBlocks += 1
        guard kneeCoefficient > 0 || significantBlocks >= Self.startBlockCount else { return }
        let change = Self.step * errorCorrelation / derivativeEnergy
        kneeCoefficient = min(Self.largestKneeCoefficient, max(0, kneeCoefficient + change))
    }
}
