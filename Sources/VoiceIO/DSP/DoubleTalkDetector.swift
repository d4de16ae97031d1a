/// Decides, frame by frame, whether the near-end talker speaks while the far end plays.
///
/// The echo canceller's output holds the near talker, the residual echo and noise. When its power rises
/// clearly above what the residual echo and noise explain (`ratioThreshold`, 6 dB by default) the near end
/// is active; the decision then holds for `hangoverFrames` so word endings and short pauses do not make
/// the suppressor clamp down between syllables. Use it to limit suppression (and to freeze a filter's
/// adaptation) while the near talker speaks.
///
/// All methods are real-time safe.
public struct DoubleTalkDetector {
    /// Output power over explained power (residual echo + noise) above which the near end is active.
    public var ratioThreshold: Float
    /// Frames the decision holds after the last frame that crossed the threshold.
    public var hangoverFrames: Int

    /// True while the near end is judged active (including hangover).
    public private(set) var nearEndActive = false
    /// True while the near end and the far end are both active.
    public private(set) var doubleTalk = false
    /// Frames since the output last crossed the threshold (large before it ever did).
    public private(set) var framesSinceNearEnd = Int.max / 2
    /// `framesSinceNearEnd` before the current run of frames over the threshold, and how many frames of that run
    /// crossed it.
    private var framesBeforeOnset = Int.max / 2
    private var crossingsSinceOnset = 0

    public init(ratioThreshold: Float = 4, hangoverFrames: Int = 8) {
        self.ratioThreshold = ratioThreshold
        self.hangoverFrames = hangoverFrames
    }

    /// One frame: the canceller output's power, the estimated residual echo power and noise power (all
    /// summed over the same bins), and whether the far end is active. Returns `nearEndActive`. Real-time safe.
    @discardableResult
    public mutating func update(outputPower: Float, residualEchoPower: Float, noisePower: Float,
                                farEndActive: Bool) -> Bool {
        let explained = residualEchoPower + noisePower + 1e-12
        if outputPower > ratioThreshold * explained {
            if !nearEndActive { framesBeforeOnset = framesSinceNearEnd; crossingsSinceOnset = 0 }
            crossingsSinceOnset += 1
            framesSinceNearEnd = 0
        } else {
            framesSinceNearEnd += 1
        }
        nearEndActive = framesSinceNearEnd <= hangoverFrames
        doubleTalk = nearEndActive && farEndActive
        return nearEndActive
    }

    /// Whether the near end was heard for the first time in at least `quietFrames` frames, in the last frame or the one
    /// before, and once only since: a block that follows such an onset may still show it was no talker
    /// (`dismissFrame` then takes the onset back). Real-time safe.
    func isFreshOnset(afterQuietFrames quietFrames: Int) -> Bool {
        nearEndActive && crossingsSinceOnset == 1 && framesSinceNearEnd <= 1 && framesBeforeOnset > quietFrames
    }

    /// The frame just seen held no talker (e.g. output the echo estimate predicts): no word ending is pending, so
    /// the hangover ends at once; and if the talker was heard in a single frame just before (an onset of one frame
    /// followed at once by echo) that frame was the echo's onset, and `framesSinceNearEnd` counts on from the
    /// talker heard before it. Real-time safe.
    public mutating func dismissFrame() {
        if nearEndActive && crossingsSinceOnset == 1 && framesSinceNearEnd <= 1 {
            framesSinceNearEnd = min(framesBeforeOnset, Int.max / 2) + 1 + framesSinceNearEnd
        } else {
            framesSinceNearEnd = max(framesSinceNearEnd, hangoverFrames + 1)
        }
        nearEndActive = false
        doubleTalk = false
    }

    /// Forgets the near end (hangover included), as before any frame: after the echo path was found to have
    /// changed, what looked like a talker was the new echo. Real-time safe.
    public mutating func reset() {
        framesSinceNearEnd = Int.max / 2
        nearEndActive = false
        doubleTalk = false
    }
}
