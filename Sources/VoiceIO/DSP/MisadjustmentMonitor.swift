/// Tells an adaptive echo filter that has stopped fitting the room (the echo path changed) from one that is
/// right while the near end talks.
///
/// At the optimum a linear filter's error is orthogonal to its own output (the echo estimate y): whatever is
/// left, near talker or noise, does not correlate with y. When the path changes, the filter keeps predicting
/// the old echo, the error becomes new echo − y and correlates *negatively* with y. So over windows of
/// `windowBlocks` blocks with the far end playing, the normalised correlation ⟨e·y⟩ / √(⟨e²⟩⟨y²⟩) is measured;
/// `consecutiveWindows` windows below `threshold` in a row report misadjustment. A near talker only dilutes
/// the correlation, it cannot make it negative, so double talk does not trigger it. All methods are real-time safe.
struct MisadjustmentMonitor {
    var windowBlocks = 10
    var threshold: Float = -0.4
    var consecutiveWindows = 2
    /// Far-end blocks after a (re)start before any verdict: a filter still converging overshoots, and its error
    /// then correlates negatively with its estimate too.
    var settlingBlocks = 200

    private var errorEstimate: Float = 0
    private var errorPower: Float = 0
    private var estimatePower: Float = 0
    private var blocks = 0
    private var activeBlocks = 0
    private var failedWindows = 0
    private var farEndBlocks = 0

    /// One block of the filter's error and echo estimate; returns true when the filter should start over.
    mutating func observe(error: UnsafeBufferPointer<Float>, estimate: UnsafeBufferPointer<Float>,
                          farEndActive: Bool) -> Bool {
        if farEndActive {
            for index in 0..<min(error.count, estimate.count) {
                errorEstimate += error[index] * estimate[index]
                errorPower += error[index] * error[index]
                estimatePower += estimate[index] * estimate[index]
            }
            activeBlocks += 1
            farEndBlocks += 1
        }
        blocks += 1
        guard blocks >= windowBlocks else { return false }
        defer {
            blocks = 0
            activeBlocks = 0
            errorEstimate = 0
            errorPower = 0
            estimatePower = 0
        }
        guard farEndBlocks > settlingBlocks, activeBlocks * 4 >= windowBlocks * 3, estimatePower > 1e-9,
              errorPower > 1e-9 else {
            failedWindows = 0
            return false
        }
        let correlation = errorEstimate / (errorPower * estimatePower).squareRoot()
        failedWindows = correlation < threshold ? failedWindows + 1 : 0
        return failedWindows >= consecutiveWindows
    }
}
