#if canImport(Glibc)
import Glibc
#endif

/// Tells, in a room that rings past the linear filter, a near talker by the output the second linear stage
/// (`ResidualPathKalman`) does not explain, so that the residual echo suppressor's detector hears a talker who starts
/// under a far-end phrase.
///
/// Such a room leaves the block filter's leftover spread and uneven, and the detector's learned estimate of it stands
/// 6-13 dB over the output through the far end's single talk (its margin for the leftover's peaks): a talker 3 dB
/// under the echo who starts as the far end grows louder stays under it, the near end counts as quiet, and the ratios
/// learn the talker's first words as echo at their full rate, which keeps the talker unheard for a second or more (our
/// talker-timing x03, far-speaker f11's talker 150 ms later: −13.3 dB over its first half second, −5.9 over the next).
/// The stage follows the leftover itself: over the far end's single talk its estimate stands within a few dB of the
/// output (f11 3-12 s: median +1 dB), under a talker 8-25 dB below it (median −12 dB).
///
/// A block is likely a talker's when the stage's estimate over the output, each averaged over `averageSeconds`, stands
/// `unexplainedDecibels` under 0 dB and under its norm (its mean in dB over the far end's single talk, the audible
/// blocks not so flagged), the output `noiseBar` over the noise and its part coherent with the echo estimate under
/// `coherentShare` of it, while the far end plays and the stage has learned `learnedSeconds` of it since it started.
/// The caller judges only where the filter finds no leaked echo. A path that moved unnoticed leaves output the stage
/// has not learned too, but coherent with the estimate (the long-tailed p07 after its move at a call's 5 ms blocks: −6
/// to −12 dB of the output, a talker's −22 dB or less), and the norm follows it where the coherence does not tell
/// (p07 flagged the far end's last words 2 s after the move without the norm, ERLE 33.1 -> 24.8 dB; without the
/// coherence 24.4). Real-time safe.
struct UnexplainedOutputWatch {
    private var outputMean: Float = 0
    private var stagedMean: Float = 0
    private var coherentMean: Float = 0
    private var norm = DecibelNorm()
    private var learnedBlocks = 0
    private let smoothing: Float
    private let normSmoothing: Float
    private let learnedMinimumBlocks: Int

    /// How far over the stage's estimate, and under the norm, the output must stand: 8 dB. The figures here were taken
    /// with the first form of the rule (the 8 dB under 0 dB alone, no coherence, the stage's start counted only where
    /// it stayed at its start): at 6 dB the hall w03's far end passed for a talker (ERLE 47.0 -> 24.6 dB); at 10 the
    /// hall w02's talker gained nothing.
    private static var unexplainedDecibels: Float { 8 }
    /// The most of the output the coherent part may hold (−15 dB; the far end's single talk in f11: −15, p07's moved
    /// path −6 to −12, a talker −22 or less).
    private static var coherentShare: Float { 0.03 }
    /// How far over the noise the output must stand (6 dB): a faint block's output is the noise's.
    private static var noiseBar: Float { 4 }
    /// The averages' time constant: two blocks of 10 ms (at four, with the first form, the hall w01's talker lost
    /// 0.03 of STOI).
    private static var averageSeconds: Double { 0.02 }
    /// The norm's time constant.
    private static var normSeconds: Double { 1 }
    /// The far end the stage must have learned since it started before its estimate is read (with the first form of
    /// the rule, counted from every start: at 0.5 s the stage restarted under the hall w03's talker passed the far end
    /// after it, ERLE 47.0 -> 42.5 dB; at 2 s that talker kept 0.016 of STOI less).
    private static var learnedSeconds: Double { 1 }

    init(rate: BlockRate) {
        smoothing = rate.smoothingWeight(seconds: Self.averageSeconds)
        normSmoothing = rate.smoothingWeight(seconds: Self.normSeconds)
        learnedMinimumBlocks = rate.blocks(seconds: Self.learnedSeconds)
    }

    /// One block, its powers summed over the detector's bins. `outputPower`: the block filter's output;
    /// `stagedEchoPower`: the stage's estimate of the echo in it (the output less what the stage leaves);
    /// `coherentEchoPower`: the part of the output coherent with the filter's echo estimate; `farEndActive`: the far
    /// end plays; `isNearEndQuiet`: no talker heard for a while; `isJudged`: the room rings past the filter and the
    /// filter finds no leaked echo. Returns whether the block is likely a talker's the stage does not explain.
    /// Real-time safe.
    mutating func observe(outputPower: Float, stagedEchoPower: Float, coherentEchoPower: Float, noisePower: Float,
                          farEndActive: Bool, isNearEndQuiet: Bool, isJudged: Bool) -> Bool {
        outputMean += smoothing * (outputPower - outputMean)
        stagedMean += smoothing * (stagedEchoPower - stagedMean)
        coherentMean += smoothing * (coherentEchoPower - coherentMean)
        if farEndActive { learnedBlocks = min(learnedBlocks + 1, Int.max / 2) }
        let isAudible = outputMean > Self.noiseBar * noisePower
        let ratioDecibels = 10 * log10(max(stagedMean, 1e-30) / max(outputMean, 1e-30))
        let bar = min(norm.decibels, 0) - Self.unexplainedDecibels
        let isTalkerLikely = isJudged && farEndActive && isAudible && learnedBlocks > learnedMinimumBlocks
            && ratioDecibels < bar
            && coherentMean < Self.coherentShare * outputMean
        if farEndActive && isNearEndQuiet && isAudible && !isTalkerLikely {
            norm.follow(ratioDecibels, smoothing: normSmoothing)
        }
        return isTalkerLikely
    }

    /// Starts over with the stage. Real-time safe.
    mutating func restart() {
        learnedBlocks = 0
        norm.forget()
    }
}
