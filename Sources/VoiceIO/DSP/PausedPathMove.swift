/// Tells a path that moved while the far end was silent, once the far end is back, whether or not a talker is heard:
/// the filter's estimate, learned before the pause, then adds more to the output than it takes away.
///
/// The output's energy less the microphone's is the estimate's energy less twice its correlation with the microphone:
/// with the echo, which a right estimate makes large, and with a talker, which averages out. So an output louder than
/// the microphone over the first blocks after the far end's return is the filter's error, not a talker, where the
/// talker cannot have pulled the filter: it adapts only while the far end plays, and it has not started over in the
/// last seconds (`ResidualEchoSuppressor.isFilterSettled`). The suppressor's own test of a louder output asks for a
/// near end quiet for half a second, which the end of a double talk is not: in our late-dt-change u05 (the loudspeaker
/// moved closer 0.1 s before a second's pause of the far end, inside double talk) the echo passed for 120 ms after
/// the far end came back (the far-end stretch's first half second at 6 dB, a perfect canceller's at 31 dB).
///
/// A return counts after `pauseSeconds` of silence; for `watchSeconds` after it, a block is the filter's error when
/// its output stands `excess` over the microphone's and the output summed since the return `sumExcess` over the
/// microphone's sum. Real-time safe.
struct PausedPathMove {
    private var blocksSinceFarEnd = Int.max / 2
    private var blocksSinceReturn = Int.max / 2
    private var outputSinceReturn: Float = 0, microphoneSinceReturn: Float = 0
    private let pauseBlocks: Int
    private let watchBlocks: Int

    /// The silence after which the far end's sound is a return, and how long after it blocks are judged.
    private static var pauseSeconds: Double { 0.3 }
    private static var watchSeconds: Double { 0.3 }
    /// How much louder than the microphone the output must be in the block (1 dB): at 0 dB the chance excess of a
    /// talker over an unmoved path's estimate held 14 of our scenes' talkers 0.1-0.35 dB lower and their double-talk
    /// STOI up to 0.006; moved paths stood 1-4 dB over.
    private static var excess: Float { 1.26 }
    /// How much louder than the microphone the output must be summed since the return (0.5 dB). The first blocks of a
    /// moved path's echo stand as loud as the microphone (the old estimate neither matches nor adds much yet), and
    /// they hold the sum under 1 dB while the blocks after them are 1-2 dB over: in our late-dt-change u05 the echo
    /// passed for 30 ms more at 1 dB, and the far-end stretch after the double talk read 26.3 dB at 10 ms blocks and
    /// 24.5 at 5 ms (29.2 and 29.4 so). Over our other 136 tuning scenes, at either block size, no figure moved
    /// by more than 0.015 in PESQ or 0.002 in STOI.
    private static var sumExcess: Float { 1.12 }

    init(rate: BlockRate) {
        pauseBlocks = max(1, rate.blocks(seconds: Self.pauseSeconds))
        watchBlocks = max(1, rate.blocks(seconds: Self.watchSeconds))
    }

    /// One block: whether the far end plays, the output's and the microphone's energies (the microphone as the
    /// filter saw it), and whether the filter has not started over lately. Returns whether the block's output is the
    /// filter's error.
    mutating func observe(farEndActive: Bool, outputEnergy: Float, microphoneEnergy: Float,
                          isFilterSettled: Bool) -> Bool {
        let isReturn = farEndActive && blocksSinceFarEnd >= pauseBlocks
        blocksSinceFarEnd = farEndActive ? 0 : min(blocksSinceFarEnd + 1, Int.max / 2)
        if isReturn {
            blocksSinceReturn = 0
            outputSinceReturn = 0
            microphoneSinceReturn = 0
        } else {
            blocksSinceReturn = min(blocksSinceReturn + 1, Int.max / 2)
        }
        guard blocksSinceReturn < watchBlocks else { return false }
        outputSinceReturn += outputEnergy
        microphoneSinceReturn += microphoneEnergy
        return isFilterSettled && outputEnergy > Self.excess * microphoneEnergy
            && outputSinceReturn > Self.sumExcess * microphoneSinceReturn
    }
}
