#if canImport(Glibc)
import Glibc
#endif

/// Tells, in a room that rings past the linear filter, a near talker the residual echo suppressor's detector does not
/// hear, so that the talker does not teach the suppressor's ratios that it is echo.
///
/// In such a room the detector's estimates of the echo left stand over the leftover (its late tail can only be
/// bounded), and a talker 5 dB under the echo can stay under them from its first word: the near end then counts as
/// quiet, the ratios learn the talker as echo at their full rate, and the talker stays unheard (our reverberant r02:
/// −6.2 dB over its double talk, DT STOI 0.63; `HallDoubleTalkTests`' 0.6 s hall over a −54 dBFS background: −5.3 dB
/// for a talker 8 dB under the echo). The linear filter tells the two apart: it explains the echo, not the
/// talker, so the share of the microphone its output holds (`EchoPipeline`'s smoothed output over microphone power)
/// rises under the talker, in r02 from −16 dB (median) in the far end's single talk to −6 dB; and its own leak estimate
/// does not take that output for echo it leaked. A path that moves raises the share too, but the filter finds that
/// output leaked: in our long-tailed p07 its leaked echo stood 3-8 times its error (median) after the move, under
/// r02's talker 0.07-0.14 times.
///
/// A block is likely an unheard talker's when the share stands `riseDecibels` over its norm (its mean in dB over the
/// far end's single talk, the blocks so flagged left out) and the leak estimate's ratio, averaged over about 100 ms,
/// is under 1. The norm follows the share within a second, a share more than 3 dB over it over ten seconds: an unheard
/// talker is single talk to it too, and a norm that followed it within a second took a talker 5 dB under a far-speaker
/// room's echo for the room (our far-speaker f11 with its talker 90-180 ms later than the scene's, as a live run's
/// talker may come: 6-7 dB over the norm at its first words, then less as the norm followed; the talker unheard for the
/// whole double talk, DT STOI 0.34-0.62 against 0.89 at the scene's own timing). For the same reason the bar is 6 dB,
/// not 8. The norm needs half a second of single talk first and starts over with the filter, unless the restart keeps
/// it (`restart(keepingNorm:)`).
/// Real-time safe.
struct UnheardTalkerWatch {
    private var norm = DecibelNorm()
    private var leakedEchoToError: Float = 0
    private let normSmoothing: Float
    private let normRiseSmoothing: Float
    private let leakSmoothing: Float
    private let normMinimumBlocks: Int
    /// Whether the norm was kept through the filter's last restart (`restart(keepingNorm:)`).
    private var isNormKept = false

    /// How far over its norm the share must stand.
    private static var riseDecibels: Float { 6 }
    /// The norm's time constants (within `slowRiseDecibels` over it, and more than that over it), and the leak ratio's
    /// average's.
    private static var normSeconds: Double { 1 }
    private static var normRiseSeconds: Double { 10 }
    /// How far over the norm the share must stand to move it at the slow rate: the leftover's own wander stays under.
    private static var slowRiseDecibels: Float { 3 }
    private static var leakSeconds: Double { 0.1 }
    /// The single talk the norm needs before it judges.
    private static var normMinimumSeconds: Double { 0.5 }
    /// The share of the output the second linear stage explains over which, while the norm is kept, the output is the
    /// echo's leftover, not a talker: half.
    private static var keptNormExplainedShare: Float { 0.5 }

    init(rate: BlockRate) {
        normSmoothing = rate.smoothingWeight(seconds: Self.normSeconds)
        normRiseSmoothing = rate.smoothingWeight(seconds: Self.normRiseSeconds)
        leakSmoothing = rate.smoothingWeight(seconds: Self.leakSeconds)
        normMinimumBlocks = rate.blocks(seconds: Self.normMinimumSeconds)
    }

    /// One block. `outputShare`: the filter's output over the microphone's power, smoothed; `leakedEchoToErrorRatio`:
    /// the filter's leaked echo over its error (`EchoCanceller.leakedEchoToErrorRatio`); `isFarEndAlone`: the far end
    /// plays and no talker has been heard for a while; `isNearEndQuiet`: no talker has been heard for a while, the far
    /// end playing or not; `leftoverExplainedShare`: the share of the output the second linear stage explains
    /// (`ResidualEchoSuppressor.leftoverExplainedShare`); `isRoomRingingLong`: the room rings past the filter (only
    /// then does it judge). Returns whether the block is likely a talker's the detector does not hear. Real-time safe.
    mutating func observe(outputShare: Float, leakedEchoToErrorRatio: Float, isFarEndAlone: Bool, isNearEndQuiet: Bool,
                          leftoverExplainedShare: Float, isRoomRingingLong: Bool) -> Bool {
        if isNormKept && isNearEndQuiet { restart() }
        leakedEchoToError += leakSmoothing * (leakedEchoToErrorRatio - leakedEchoToError)
        let shareDecibels = 10 * log10(max(outputShare, 1e-20))
        let isTalkerLikely = isRoomRingingLong && norm.count >= normMinimumBlocks
            && shareDecibels > norm.decibels + Self.riseDecibels && leakedEchoToError < 1
        if isFarEndAlone && !isTalkerLikely {
            let smoothing = shareDecibels > norm.decibels + Self.slowRiseDecibels ? normRiseSmoothing : normSmoothing
            norm.follow(shareDecibels, smoothing: smoothing)
        }
        return isTalkerLikely && !(isNormKept && leftoverExplainedShare > Self.keptNormExplainedShare)
    }

    /// Forgets the norm, as when the filter starts over; `keepingNorm` keeps it until the near end is next quiet. The
    /// norm is the filter's share of the microphone in the far end's single talk, which a restarted filter has yet to
    /// show: where the restart keeps the suppressor's ratios to the reference (a talker heard for a second, no echo
    /// found, the old path taken back) it keeps the norm too. Started over, the watch judged nothing until the talk
    /// was over, and a hall's talker it had kept heard went unheard from the restart on (our hall-dt-change w02, its
    /// loudspeaker moved under a talker 9 dB under the echo: -4.16 dB over the double talk, DT STOI 0.652; -2.49 and
    /// 0.726 kept; w03 0.774 -> 0.793, at 5 ms w02 0.628 -> 0.691 and w03 0.764 -> 0.823). Kept alone, it took the echo
    /// after the talk for a talker, so the near end never went quiet (w02's far end after the talk 48.1 -> 22.0 dB):
    /// while kept, its flag is not given where the second linear stage explains over half the output, and the norm
    /// goes once the near end is quiet (47.6 dB; w03 51.8 -> 41.4, the cost). Real-time safe.
    mutating func restart(keepingNorm: Bool = false) {
        isNormKept = keepingNorm
        if !keepingNorm { norm.forget() }
    }
}
