/// How much of the jitter buffer's delay above its target to remove smoothly during playout, and from what.
///
/// At every packet decode the buffer reports the audio ahead of playout (the packet about to play included) plus
/// the time the newest packet has waited: how long that packet stays in the buffer, which the target bounds.
/// When it runs dry while playing it reports the same level then (just the wait: nothing is ahead). Over each
/// window of `windowMilliseconds` of decoded audio the controller keeps the smallest such level: in steady
/// playout it dips to about the target once per packet, so a minimum above the target is excess, not the
/// saw-tooth of arrivals. Excess is removed when it is
/// - large: beyond what one expansion can have added (a backlog that arrived in a burst), in the window it shows;
/// - lasting: the lowest level seen, forgotten at `forgettingMillisecondsPerSecond`, is still above the target
///   by the tolerance. A packet held up beyond the target (the sender's or the network's rare hiccup, which the target's
///   percentile does not cover) makes the buffer run dry or leaves little excess when it plays; the delay the
///   buffer gains waiting for it is what the next such packet needs, so it is kept for seconds, not removed at
///   the next pause only to run dry again.
/// The excess (`surplusFrameCount`) is then removed where it is least audible:
/// - silent or DTX frames are shortened outright (all of their frames may go);
/// - speech is time-compressed by whole pitch periods, at most `maxSpeechShare` of its frames, and only once the
///   excess reaches `speechThresholdMilliseconds` (a smaller one waits for the next pause);
/// - an excess of one block that a drain or a stall left (see `observe`) is cut from silence only
///   (`isSilenceOnly`): exactly a block.
///
/// Excess that piles up while nothing is consumed is not this controller's: the buffer skips it at once when
/// playout resumes. Real-time safe: plain values, no allocation.
struct LatencyController {
    static let windowMilliseconds = 60
    static let speechThresholdMilliseconds = 10
    /// The lowest level seen rises by this much per second of decoded audio when no lower one comes.
    static let forgettingMillisecondsPerSecond = 0.5
    /// At most this share of a speech stretch is removed (it plays at most 1.5 times as fast).
    static let maxSpeechShare = 1.0 / 3
    /// RMS below which a decoded frame counts as silence (−45 dBFS).
    static let silenceRMS: Float = 0.0056

    let windowFrameCount: Int
    let speechThresholdFrameCount: Int
    private let forgettingPerWindowFrameCount: Double
    private var windowDecodedFrameCount = 0
    private var windowMinimum = Int.max
    /// The lowest level seen, rising by `forgettingMillisecondsPerSecond` (nil before the first window).
    private var lowestLevelFrameCount: Double?
    /// The lowest level was forgotten after a stall and the buffer has not run dry since: an excess of one block
    /// is what the stall left, not a reserve a hiccup earned.
    private var isAfterStall = false
    /// A large excess is being removed: it goes on down to the tolerance.
    private var isDraining = false
    /// Excess over the target still to remove, in frames.
    private(set) var surplusFrameCount = 0
    /// The surplus is one block, to be cut from silence only (speech would need whole pitch periods, not a block).
    private(set) var isSilenceOnly = false

    init(sampleRate: Int) {
        windowFrameCount = sampleRate * Self.windowMilliseconds / 1000
        speechThresholdFrameCount = sampleRate * Self.speechThresholdMilliseconds / 1000
        forgettingPerWindowFrameCount = Double(windowFrameCount) * Self.forgettingMillisecondsPerSecond / 1000
    }

    /// Called before each packet is decoded (`decodedFrameCount` its frames), and when the buffer runs dry while
    /// playing (0 frames), with the level then. Decoding happens at pulls, so the level moves in steps of the
    /// puller's block (`toleranceFrameCount`): removing audio either leaves the decodes at the same pulls (the
    /// level stays, the delay heard falls) or moves them one pull earlier (the level falls by a block). An excess
    /// of less than one and a half blocks is left alone; a larger one is removed down to one block above the
    /// target, so whichever pull the decodes then fall to, the level stays at the target or above, with half a
    /// block in reserve once it drops. An excess counts as large beyond two blocks and half a packet (an
    /// expansion adds at most half the packet played, which moves the decodes by at most one block more); a
    /// large one is drained down to less than a block. What a drain, or a stall (`resumed`), leaves between one
    /// block and one and a half is removed as exactly one block, cut from silence: the decodes then move exactly
    /// one pull earlier and the level stays at the target or above. (Left alone, it stayed for tens of seconds.)
    /// An excess a hiccup earned (the buffer ran dry since) is a reserve and stays below one and a half blocks.
    mutating func observe(aheadFrameCount: Int, targetFrameCount: Int, decodedFrameCount: Int, toleranceFrameCount: Int,
                          packetFrameCount: Int) {
        windowMinimum = min(windowMinimum, aheadFrameCount)
        if decodedFrameCount == 0 { isAfterStall = false }
        windowDecodedFrameCount += decodedFrameCount
        guard windowDecodedFrameCount >= windowFrameCount else { return }
        let excess = windowMinimum - targetFrameCount
        let lowest = min((lowestLevelFrameCount ?? .infinity) + forgettingPerWindowFrameCount, Double(windowMinimum))
        lowestLevelFrameCount = lowest
        let threshold = toleranceFrameCount + toleranceFrameCount / 2
        isDraining = excess >= 2 * toleranceFrameCount + packetFrameCount / 2
            || (isDraining && excess >= toleranceFrameCount)
        let removable = isDraining ? excess : Int(lowest) - targetFrameCount
        isSilenceOnly = (isDraining || isAfterStall) && removable >= toleranceFrameCount && removable < threshold
        surplusFrameCount = removable >= threshold ? removable - toleranceFrameCount : isSilenceOnly ? toleranceFrameCount : 0
        windowDecodedFrameCount = 0
        windowMinimum = .max
    }

    /// Frames that may be dropped from a silent frame of `frameCount`.
    func silenceRemoval(frameCount: Int) -> Int { min(surplusFrameCount, frameCount) }

    /// Frames that may be removed from a speech stretch of `frameCount` by time compression (0 below the
    /// threshold).
    func speechRemoval(frameCount: Int) -> Int {
        guard !isSilenceOnly, surplusFrameCount >= speechThresholdFrameCount else { return 0 }
        return min(surplusFrameCount, Int(Double(frameCount) * Self.maxSpeechShare))
    }

    mutating func removed(_ frameCount: Int) {
        surplusFrameCount = max(surplusFrameCount - frameCount, 0)
    }

    /// The buffer resumed after running dry for `concealedFrameCount` (a stall of the sender or the network): a
    /// dry spell longer than a large excess (two blocks and half a packet) is beyond what keeping delay could
    /// cover, so its dip is forgotten and the lowest level starts over from the levels after it. (Kept, it held
    /// the 10-30 ms a stall's backlog left above the target for a minute: the lowest level rises 0.5 ms/s.)
    mutating func resumed(concealedFrameCount: Int, toleranceFrameCount: Int, packetFrameCount: Int) {
        guard concealedFrameCount >= 2 * toleranceFrameCount + packetFrameCount / 2 else { return }
        lowestLevelFrameCount = nil
        isAfterStall = true
    }

    /// Forgets the window and any surplus (after a skip, a restart or a new stream).
    mutating func reset() {
        windowDecodedFrameCount = 0
        windowMinimum = .max
        lowestLevelFrameCount = nil
        isAfterStall = false
        isDraining = false
        isSilenceOnly = false
        surplusFrameCount = 0
    }

    static func isSilent(_ frames: UnsafeMutableBufferPointer<Float>) -> Bool {
        guard !frames.isEmpty else { return true }
        var sum: Float = 0
        for sample in frames { sum += sample * sample }
        return sum / Float(frames.count) < silenceRMS * silenceRMS
    }
}
