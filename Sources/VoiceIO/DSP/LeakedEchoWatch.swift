/// Tells when the residual echo suppressor's detector has been hearing a near talker in what is the linear filter's
/// leaked echo: after an echo path changes in double talk, the new echo the filter has not learned exceeds what the
/// suppressor's ratios (learned on the old path) explain, and the detector takes it for the talker. Its ratios rise at
/// their full rate only after half a second without a talker, which then never comes: our `dt-change` scene t02 (the
/// path 6 dB louder in double talk) let 20 dB of echo through for 2.5 s after the talker stopped.
///
/// The filter's leak estimate tells the two apart (`EchoCanceller.leakedEchoToErrorRatio`): in far-end blocks of our
/// scenes' double talk, 2-29 % had more leaked echo than error; in far-end single talk once the filter had converged,
/// 71-97 %. A block counts as leaked echo when the detector has not found the near end quiet for a second (the
/// deadlock, not the first words of a talker after far-end single talk), at least 75 % of the last far-end blocks
/// (smoothed over 200 ms) had more leaked echo than error, and this block's leaked echo is 3 times its error or more.
/// The suppressor's ratios then learn from it as in far-end single talk for sure
/// (`ResidualEchoSuppressor.isOutputLeakedEcho`). Real-time safe.
struct LeakedEchoWatch {
    private var leakedShare: Float = 0
    private var blocksNotQuiet = 0
    /// Whether the last block's leaked echo was `leakedBlockRatio` times its error or more: the filter itself finds
    /// the block leaked echo (`ResidualEchoSuppressor.filterFindsLeakedEcho`), whether or not the far end plays.
    private(set) var isLeakedBlock = false
    /// Whether the last block's leaked echo was `clearlyLeakedBlockRatio` times its error or more: next to the leaked
    /// echo, the error holds little else (`ResidualEchoSuppressor.filterFindsClearlyLeakedEcho`).
    private(set) var isClearlyLeakedBlock = false
    private let smoothing: Float
    private let deadlockBlocks: Int

    /// The smoothing's time constant, and how long the detector must not have found the near end quiet.
    private static var smoothingSeconds: Double { 0.2 }
    private static var deadlockSeconds: Double { 1 }
    /// Share of recent far-end blocks with more leaked echo than error for a leaked block.
    private static var minimumLeakedShare: Float { 0.75 }
    /// A block's leaked echo over its error from which the filter finds the block leaked echo (`isLeakedBlock`).
    private static var leakedBlockRatio: Float { 3 }
    /// A block's leaked echo over its error from which the error is clearly leaked echo (`isClearlyLeakedBlock`): the
    /// onset of a talker over a hot microphone's echo (`HotMicrophoneTests`) came at 3.1.
    private static var clearlyLeakedBlockRatio: Float { 10 }

    init(rate: BlockRate) {
        smoothing = rate.smoothingWeight(seconds: Self.smoothingSeconds)
        deadlockBlocks = rate.blocks(seconds: Self.deadlockSeconds)
    }

    /// Whether the detector has not found the near end quiet for more than a second (up to the last block observed): a
    /// talker who has been talking, not one the detector began to hear a moment ago, which may be a moved path's new
    /// echo. Real-time safe.
    var isTalkerHeardLong: Bool { blocksNotQuiet > deadlockBlocks }

    /// One block: the filter's leaked echo over its error (`EchoCanceller.leakedEchoToErrorRatio`), whether the far
    /// end plays, and whether the suppressor's detector has found the near end quiet (`isNearEndQuiet`). Returns
    /// whether the block's output is leaked echo the detector may be taking for a talker.
    mutating func observe(leakedEchoToErrorRatio ratio: Float, farEndActive: Bool, isNearEndQuiet: Bool) -> Bool {
        isLeakedBlock = ratio > Self.leakedBlockRatio
        isClearlyLeakedBlock = ratio > Self.clearlyLeakedBlockRatio
        blocksNotQuiet = isNearEndQuiet ? 0 : min(blocksNotQuiet + 1, Int.max / 2)
        guard farEndActive else { return false }
        leakedShare += smoothing * ((ratio > 1 ? 1 : 0) - leakedShare)
        return blocksNotQuiet > deadlockBlocks && leakedShare > Self.minimumLeakedShare && isLeakedBlock
    }
}
