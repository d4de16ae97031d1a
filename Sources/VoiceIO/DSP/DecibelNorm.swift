/// A running mean of a figure in decibels that starts at its first value: the norm a watch compares each block's
/// figure with (`UnheardTalkerWatch`, `UnexplainedOutputWatch`). Real-time safe.
struct DecibelNorm {
    /// The norm (0 before the first value).
    private(set) var decibels: Float = 0
    /// The values it has followed since it started or was forgotten.
    private(set) var count = 0

    /// Takes `value` in with a weight of `smoothing` (the first value sets it). Real-time safe.
    mutating func follow(_ value: Float, smoothing: Float) {
        decibels = count == 0 ? value : decibels + smoothing * (value - decibels)
        count += 1
    }

    /// Starts over: the norm is 0 again until the next value sets it. Real-time safe.
    mutating func forget() {
        decibels = 0
        count = 0
    }
}
