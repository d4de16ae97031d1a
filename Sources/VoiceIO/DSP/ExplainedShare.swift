/// How much of the microphone the linear filter's echo estimate explains: one minus the filter's output power over
/// the power of the microphone it saw, each smoothed over about 100 ms. Near 0 for a filter pulled by a near talker
/// it cannot follow (its output holds all the microphone's power, or more); towards 1 for a filter that learns an
/// echo. Real-time safe.
struct ExplainedShare {
    private var errorPower: Float = 0
    private var microphonePower: Float = 0
    /// Weight of a block: its share of the 100 ms time constant.
    private let smoothing: Float

    /// The smoothing's time constant.
    private static var seconds: Double { 0.1 }

    /// Smoothed microphone power (summed over a block) below which nothing counts as explained: a digitally silent
    /// microphone (a muted one, a null sink's monitor) has no echo for the filter to explain (about -120 dBFS).
    private static var silentPower: Float { 1e-10 }

    init(rate: BlockRate) {
        smoothing = rate.smoothingWeight(seconds: Self.seconds)
    }

    /// One block: the filter's output power and that of the microphone it saw (after the notch), summed over the block.
    mutating func add(errorPower blockError: Float, microphonePower blockMicrophone: Float) {
        errorPower += smoothing * (blockError - errorPower)
        microphonePower += smoothing * (blockMicrophone - microphonePower)
    }

    /// The share of the microphone's power explained, 0 ... 1.
    var share: Float {
        microphonePower > Self.silentPower ? max(0, 1 - errorPower / microphonePower) : 0
    }

    /// Whether the filter takes 3 dB or more off the microphone: it explains half of it or more.
    var isHalfExplained: Bool { share >= 0.5 }
}
