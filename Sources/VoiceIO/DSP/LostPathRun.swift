/// Tells a path that moved under a filter that was cancelling well from a near talker who started, for
/// `BlockAdaptiveFilter`'s shadow, when the shadow has not (yet) won by its margin.
///
/// A path that moves into a louder echo (another room response, 3-6 dB louder, our synthetic moved paths) leaves the
/// adapted filter taking 0-3 dB off for 1-2 s: its rate follows a leak estimate the old path left low, its error
/// correlates too weakly with the old estimate for the misadjustment monitor, and the shadow, re-learning at its fixed
/// step, gets only 0.3-3 dB below the foreground's error, short of its 6 dB. The suppressor's detector meanwhile takes
/// the new echo for a near talker, so it passes with the gentle gain of double talk (the echo 2-8 dB down for 2 s).
/// A talker who starts over the far end makes the filter lose the path as well (the talker fills its error); but then
/// neither filter can predict what fills the error, and the shadow, its fixed step pulled further by the talker,
/// stands 0-2 dB above the foreground.
///
/// So a run starts when the foreground loses the path (takes less than 3 dB off) within `startSeconds` of far-end
/// sound after cancelling 10 dB or more, and lasts while it stays lost. A far-end pause does not count towards those
/// seconds: a path that moves in the pause is lost at the far end's return, however long the pause (our `changes`
/// scene c05, the path moved in a 0.16 s pause half a second after double talk: the echo came back taken for a talker,
/// 1-7 dB down for 1.2 s until the filter started over; found so at the first window, 33 dB from 0.3 s after the
/// return). Over each `windowSeconds` of far-end blocks in the run the shadow's error energy and the foreground's are
/// summed; a window in which the shadow's stays under `shadowRatio` of the foreground's (−1 dB) finds the path moved,
/// and the shadow takes over. Real-time safe.
struct LostPathRun {
    private var farEndBlocksSinceCancellingWell = Int.max / 2
    private var isRunning = false
    private var windowFarEndBlocks = 0
    private var shadowErrorSum: Float = 0, foregroundErrorSum: Float = 0
    private let startBlocks: Int
    private let windowBlocks: Int

    /// How soon after cancelling well the path must be lost for a run to start, in seconds of far-end sound.
    private static var startSeconds: Double { 0.1 }
    /// The far-end time summed per window.
    private static var windowSeconds: Double { 0.3 }
    /// The foreground's smoothed error over the microphone's at or below which it cancels well (−10 dB).
    private static var cancellingWellRatio: Float { 0.1 }
    /// The shadow's error sum over the foreground's below which the window finds the path moved (−1 dB). At 0.7 and
    /// 0.9 the tuning scenes gave the same figures; at 0.7 one synthetic seed of five was missed.
    private static var shadowRatio: Float { 0.8 }

    init(rate: BlockRate) {
        startBlocks = rate.blocks(seconds: Self.startSeconds)
        windowBlocks = max(1, rate.blocks(seconds: Self.windowSeconds))
    }

    /// One block: the foreground's smoothed error and the microphone's smoothed power, whether the foreground has lost
    /// the path (`BlockAdaptiveFilter.hasLostPath`, and only once adapted), whether the far end plays, and the block's
    /// shadow and foreground error energies. Returns whether the shadow takes over.
    mutating func observe(smoothedForegroundError: Float, smoothedMicrophone: Float, hasLostPath: Bool,
                          farEndPlays: Bool, shadowError: Float, foregroundError: Float) -> Bool {
        let isCancellingWell = farEndPlays && smoothedForegroundError <= Self.cancellingWellRatio * smoothedMicrophone
        if isCancellingWell {
            farEndBlocksSinceCancellingWell = 0
        } else if farEndPlays {
            farEndBlocksSinceCancellingWell = min(farEndBlocksSinceCancellingWell + 1, Int.max / 2)
        }
        guard hasLostPath && (isRunning || farEndBlocksSinceCancellingWell <= startBlocks) else {
            isRunning = false
            startWindow()
            return false
        }
        isRunning = true
        guard farEndPlays else { return false }
        windowFarEndBlocks += 1
        shadowErrorSum += shadowError
        foregroundErrorSum += foregroundError
        guard windowFarEndBlocks >= windowBlocks else { return false }
        let isMoved = shadowErrorSum < Self.shadowRatio * foregroundErrorSum
        startWindow()
        if isMoved { isRunning = false }
        return isMoved
    }

    private mutating func startWindow() {
        windowFarEndBlocks = 0
        shadowErrorSum = 0
        foregroundErrorSum = 0
    }
}
