#if canImport(Glibc)
import Glibc
#endif

/// Removes the echo a linear echo canceller leaves behind (misadjustment, a tail longer than the filter,
/// a clipping loudspeaker's harmonics), per frequency bin, without swallowing the near talker.
///
/// Per block it takes the canceller's output e, its echo estimate y (microphone − e) and the delay-aligned reference x.
/// In a short-time spectrum (a hop of one block; a sine window of two blocks for analysis and synthesis, or at blocks
/// shorter than 10 ms, e.g. a call's 5 ms, an analysis window of 20 ms whose synthesis window spans its last two
/// blocks: `LowDelayWindows`) the residual echo power in bin k is estimated two ways, from the linear estimate and from
/// the reference, and the larger one is used: R = max(ρ·|Y|², γ·|X|²), each with a reverberant decay. In far-end single
/// talk for sure (the near end quiet for half a second) a third joins them, δ·Σⱼ|Yⱼ|²: the distortion of a clipping
/// loudspeaker spreads over bins where the reference is faint, in proportion to the whole echo. ρ, γ and δ are learned
/// while the far end plays (`ResidualEchoCoupling`, which also keeps the double-talk detector's own ρ and γ: the
/// gain's, learned over the noise's fluctuation in far-end pauses, overstate the echo at the next onset by 10-40 dB,
/// and a talker who starts with it would go unheard; the gentle gain of double talk takes off the residual estimated
/// with the detector's γ). They rise at the full rate only after half a second without any sign of the near talker
/// (unless the filter finds a talker the detector does not hear likely, `isUnheardTalkerLikely`, or, in a room that
/// rings past the filter, the second linear stage does not explain the output, `UnexplainedOutputWatch`), or on a block
/// of echo the filter leaks that the detector has long taken for a talker (`isOutputLeakedEcho`, after a path changed
/// in double talk). The detector's own ρ and γ do not rise at the full rate from a block that stands just under its bar
/// (`nearMissShare`) and does not correlate with the estimate: that is how a talker's first syllable under the echo
/// looks (see `process`). Learned ratios lag a path that just got louder or moved; a fourth estimate does not: the part
/// of the output that the echo estimate predicts linearly, |⟨E·Y*⟩|²/⟨|Y|²⟩ over about 0.1 s, counted where the
/// output's coherence with the estimate is above 0.3 (a near talker's chance coherence stays below). It feeds the
/// double-talk detector always and the gain in far-end single talk, so a louder echo is neither taken for the near
/// talker nor let through while the filter catches up.
///
/// The detector does not count a block as the near talker's when the block's output correlates with the echo
/// estimate (a path that got louder: the output is that estimate scaled), nor output above twice the microphone's
/// power in a bin (the filter's own pre-echo at a music onset); a block whose output correlates so also ends the
/// detector's hangover (`DoubleTalkDetector.dismissFrame`), and a single block heard just before it is taken for
/// the echo's onset. Nor, once no talker has been heard for half a second, a block whose output is louder than the
/// microphone and against the estimate: the filter's own error after the echo fell away or moved under it (a quieter
/// or shifted path), suppressed to the comfort noise at once rather than let through until the filter is found
/// misadjusted.
///
/// A room that rings longer than the linear filter leaves a late tail no ratio to the estimate follows (it comes
/// from reference the filter no longer sees). Given the tail's energy past the filter's end and its decay
/// (`setLateTail`, from an `EchoTailEstimator` fitted to the filter's impulse response) the suppressor adds
/// Σⱼ energy·decayʲ·|X(n − D − j)|², D the filter's length in blocks, kept recursively, to the residual estimate;
/// the ratios learn from what is left after it.
///
/// A linear filter that starts over under a talker heard for a second keeps the ratios to the reference
/// (`forgetEstimateCoupling(boundingEchoByReference:)`): they measured the old filter's leftover, while the new one leaves
/// the moved path's whole echo wherever its estimate has not caught up. Where no talker is heard the gain then takes the
/// reference's power times the echo path's gain for echo too, the bound fading by 20 dB over 0.65 s while the ratios
/// learn (`restartedEchoFadeSeconds`).
///
/// The gain is 1 − β·R/|E|², floored; β and the floor depend on the `DoubleTalkDetector`: firm in far-end
/// single talk (β = 4, 8 once the near end has been quiet for half a second; floor −40 dB), gentle while the
/// near end talks (β = 1, floor −12 dB) and on the talker's tail: blocks within a quarter second of it that stand
/// above the detector's estimate, unless the filter finds them leaked echo or started over in the last 2 s
/// (`isFilterSettled`); the rest of the talker's tail (below the detector's estimate: the gaps between words) takes
/// β = 2 and floor −12 dB instead of the firm gain. In a room that rings past the linear filter (`isRoomRingingLong`)
/// the talker's own reverberation fills those gaps: there the floor of double talk is −6 dB. Gains fall at once and
/// recover over a few blocks. `ComfortNoise` fills what was removed at the output's noise floor, which it tracks in the
/// output and does not let rise where the last block's residual echo estimate is above it, nor while a talker heard in
/// the last half second may still be talking.
///
/// The gain is applied to what a second linear stage leaves (`ResidualPathKalman`): per bin, a Kalman filter over the
/// reference's last 150 ms of frames that learns and cancels the block filter's leftover, fast where the block filter
/// re-learns slowly (a moved path, a hall, under a talker): over our 125 tuning scenes double talk's STOI rose in 89
/// and fell in 2 (31 under 0.93 → 26), the far end's ERLE rose in 101 and fell in 9 (by 0.5 dB at most), the talker's
/// gain in double talk moved by 0.006 dB on average. Every estimate and decision above is still reckoned on the
/// block filter's output: read on the stage's, the ratios learned its smaller, less predictable leftover, and the
/// far end's single talk lost 6.6 dB of ERLE in our public q06 and reverberant r08. The detector alone also reads the
/// stage's estimate as echo left (a tenth of it in a room that rings past the filter): the stage learns a path that
/// moved under a talker, and the onsets of held music, which the ratios cannot (`stagedEchoShare`). While the filter
/// finds no echo the stage stays at its start, and it starts over with the filter (`forgetLeftoverPath`). In a room
/// that rings past the filter it grows to span half a second up to 4 kHz (`reverberantLeftoverPathSeconds`).
///
/// Latency: one block (`latencyFrames`). `init` allocates; `process` and the properties are real-time safe.
public final class ResidualEchoSuppressor {
    /// Frames per second.
    public let sampleRate: Int
    /// Frames per block; every `process` call takes exactly this many.
    public let blockFrameCount: Int
    /// The output lags the input by this many frames.
    public var latencyFrames: Int { blockFrameCount }
    /// Power removed from the last block in dB (0 = untouched, negative = suppressed), comfort noise excluded.
    public private(set) var suppressionDecibels: Float = 0
    /// The double-talk decision of the last block.
    public private(set) var detector: DoubleTalkDetector
    /// Whether the near talker has been quiet for half a second (`quietSeconds`): far-end single talk for sure (read
    /// before a block's detection, it speaks of the blocks before). Real-time safe.
    var isNearEndQuiet: Bool { detector.framesSinceNearEnd > quietBlocks }
    /// Whether the reference is aligned with the echo (its delay known). While it is not, far-end sound of the last
    /// half second or more (`unalignedHoldSeconds`) counts as echo in every bin it reached, up to
    /// `unalignedCoupling` times its power, and no near end is detected until the far end has been silent for
    /// that long: before the delay estimator locks, the echo of a reference that leads it by up to the
    /// estimator's range is suppressed rather than let through. The hold lasts half a second past the lock (the
    /// filter starts over there, and the spectra still hold the reference from before the jump).
    /// Set it per block; real-time safe.
    public var isReferenceAligned = true
    /// Whether this block's output is echo the linear filter leaks, which the detector has been taking for a talker
    /// (`LeakedEchoWatch`): the ratios learn from it at their full rate, as in far-end single talk for sure. Set it per
    /// block; real-time safe.
    var isOutputLeakedEcho = false
    /// Whether this block's output is the linear filter's own error rather than the room's (a path that may have
    /// moved, or the pre-echo of an onset, not yet told apart): it is suppressed to the comfort noise, taken for
    /// no talker and learned from by none of the ratios, which stay as they were. Set it per block; real-time safe.
    public var isOutputFilterError = false
    /// Whether the last block's output was suppressed as the linear filter's error: `isOutputFilterError`, the
    /// suppressor's own finding of an output louder than the microphone and against the estimate, or a path that moved
    /// while the far end was silent (`PausedPathMove`). Real-time safe.
    private(set) var wasOutputFilterError = false
    /// Whether the microphone clipped in this block (the analysis window, which spans the blocks before too, counts as
    /// clipped while any of them did): the output then holds the clipping's distortion, which a linear filter leaves
    /// whatever it learned. The detector's own ratios do not learn upward from it, and the detector reads the gain's
    /// estimate there, which does: a hot microphone's clipped echo peaks had taught the detector's ratios its
    /// distortion, and a talker in the blocks that did not clip then had to stand that much higher to be heard (our
    /// hot-microphone g07, 12 dB hot, 1.4 % of its samples clipped: the talker −2.7 dB over its double talk and unheard
    /// for its first 0.6 s; −1.6 dB now, DT STOI 0.85 → 0.89). The gain there takes the larger of its ratios' estimate
    /// and the one from ratios learned on clipped blocks alone (`ResidualEchoCoupling.clippedLeakage`): the clipped
    /// blocks leave more than the mean of all blocks says (g07's ERLE 32.7 → 34.1 dB, g02's 42.5 → 44.5); so does the
    /// detector while it hears no talker (see `process`). Set it per block; real-time safe.
    var isMicrophoneClipped = false
    /// Blocks since the last that `isMicrophoneClipped` (0: this one): the analysis window spans `windows.blockCount`.
    private var blocksSinceClipped = Int.max / 2
    /// Whether the linear filter's own leak estimate finds this block's output leaked echo (its leaked echo 3 times its
    /// error: `LeakedEchoWatch.isLeakedBlock`): a leftover the filter itself takes for echo (a path that just
    /// changed) is heard against the detector's pessimistic estimate only (`ResidualEchoCoupling`). At more leaked echo
    /// than error the synthetic hall's talker (`HallDoubleTalkTests`) went unheard again. Set it per block; real-time
    /// safe.
    var filterFindsLeakedEcho = false
    /// Whether the linear filter finds this block's output clearly leaked echo (its leaked echo 10 times its error:
    /// `LeakedEchoWatch.isClearlyLeakedBlock`). After a quiet near end such a block is no talker's onset (see
    /// `process`). Set it per block; real-time safe.
    var filterFindsClearlyLeakedEcho = false
    /// Whether the linear filter has gone a while without starting over (2 s: `EchoPipeline.settledFilterSeconds`):
    /// only then is a block just after a talker held gentle as the talker's tail (see `process`). Set it per block;
    /// real-time safe.
    var isFilterSettled = true
    /// Whether the room rings past the linear filter (`LongRoomWatch`: a hall, the filter grown for it). Its leftover
    /// there holds a late tail the estimates can only bound, and they stand over it (in the far end's single talk of
    /// our reverberant r02, 5-11 dB over the output); the talker's own reverberation fills the gaps between words, which
    /// the detector's 80 ms hangover does not span. Double talk then keeps more of the output (floor −6 dB), and the
    /// rest of the talker's tail is suppressed gently, not firmly (see `process`). `EchoPipeline` sets it when the
    /// filter grows. The second linear stage grows then too (`ResidualPathKalman.grow`: see
    /// `reverberantLeftoverPathSeconds`).
    /// Real-time safe.
    var isRoomRingingLong = false {
        didSet { if isRoomRingingLong { leftoverPath.grow() } }
    }
    /// Whether this block's output is likely a talker the detector does not hear (`UnheardTalkerWatch`): the ratios
    /// then learn from it as under a talker heard, not at the full rate of far-end single talk for sure, and the
    /// detector hears it at a lower bar (`unheardTalkerBoost`). Set it per block; real-time safe.
    var isUnheardTalkerLikely = false
    /// The share of the output the second linear stage's estimate of the leftover explains in the detection band, at
    /// most 1, smoothed over `leftoverExplainedSeconds` of far-end blocks; 0 when the stage starts over. Near 1 where
    /// the output is the echo's leftover, well under it where a talker adds to it. Real-time safe.
    private(set) var leftoverExplainedShare: Float = 0
    private let leftoverExplainedSmoothing: Float
    private static var leftoverExplainedSeconds: Double { 0.25 }
    /// How much of the echo estimate is echo: 1 while the linear filter finds echo; while it has found none
    /// (`EchoPipeline.isNoEchoFound`: a headset), the share of the microphone it explains, its estimate then the
    /// talker it was pulled to. The estimate's power comes scaled so already; its coherence with the output, which
    /// no scale changes, counts in this share, and its correlation with the output dismisses no talker below 1. A
    /// headset's talker 3 Hz off the far end's pitch, whom such a filter predicts, was otherwise taken for echo in
    /// part: -5 to -18 dB over 3 s with the microphone's noise at -90 dBFS (`HeadsetTests`; -1.7 to -2.2 dB now).
    /// Set it per block; real-time safe.
    var estimateEchoShare: Float = 1

    private let fft: RealFFT
    private let binCount: Int
    /// `binCount` rounded up to whole SIMD4 lanes: the per-bin arrays have this many bins, the extra ones hold
    /// zero spectra throughout (gain 1, no echo, no noise), so the per-bin loops run four bins at a time to the end.
    private let laneBinCount: Int
    /// The comfort noise's floor copied into whole lanes (zero past `binCount`).
    private let noise: UnsafeMutablePointer<Float>
    /// The room's background: the floor the suppressed bins are filled with (held while any talker may be talking)
    /// and, over the same minimum, the one the detector and the ratios read (`backgroundPower`, held while a talker
    /// heard over the far end may be; see `process`).
    private let comfortNoise: ComfortNoise
    /// The short-time spectrum's analysis and synthesis windows: two blocks, or 20 ms at shorter blocks. At a call's 5
    /// ms blocks the detector reads each block's powers alone: from a 10 ms window they stood over its bar by chance in
    /// the far end's single talk and at held music's onsets, and were averaged over three blocks; from 20 ms they do
    /// not (our reverberant r04 and r13 at 5 ms blocks: ERLE 37.1 and 54.2 dB averaged so, 36.2 and 53.4 alone; the
    /// held music of `LiveReplayTests` 40.9-53.0 dB).
    private let windows: LowDelayWindows
    /// The second linear stage: it cancels what the block filter left, in this spectrum (see `process`).
    /// It learns from every block, or from every other where the analysis window spans four blocks (a call's 5 ms,
    /// `ResidualPathKalman.learningInterval`).
    private let leftoverPath: ResidualPathKalman
    private let outputHistory: UnsafeMutablePointer<Float>
    /// The detector's view of the output on a clipped block (`process`'s `declippedOutput`): its window and spectrum.
    private let detectionHistory: UnsafeMutablePointer<Float>
    private let detectionReal: UnsafeMutablePointer<Float>
    private let detectionImaginary: UnsafeMutablePointer<Float>
    private let estimateHistory: UnsafeMutablePointer<Float>
    private let referenceHistory: UnsafeMutablePointer<Float>
    private let frame: UnsafeMutablePointer<Float>
    private let overlap: UnsafeMutablePointer<Float>
    private let outputReal: UnsafeMutablePointer<Float>
    private let outputImaginary: UnsafeMutablePointer<Float>
    private let spareReal: UnsafeMutablePointer<Float>
    private let spareImaginary: UnsafeMutablePointer<Float>
    private let outputPower: UnsafeMutablePointer<Float>
    private let estimateTail: UnsafeMutablePointer<Float>
    private let referenceTail: UnsafeMutablePointer<Float>
    /// ρ, γ and δ, the gain's and the detector's.
    private let coupling: ResidualEchoCoupling
    /// The residual echo estimate with the detector's γ: what the gain takes off while the near end talks.
    private let audibleResidualEcho: UnsafeMutablePointer<Float>
    private let residualEcho: UnsafeMutablePointer<Float>
    /// Per bin, the output power the echo estimate explains linearly: |⟨E·conj(Y)⟩|² / ⟨|Y|²⟩.
    private let coherentEcho: UnsafeMutablePointer<Float>
    /// Smoothed cross-spectrum of the output with the echo estimate, ⟨E·conj(Y)⟩, and the estimate's power ⟨|Y|²⟩.
    private let crossReal: UnsafeMutablePointer<Float>
    private let crossImaginary: UnsafeMutablePointer<Float>
    private let estimatePower: UnsafeMutablePointer<Float>
    private let smoothedOutputPower: UnsafeMutablePointer<Float>
    private let coherenceSmoothing: Float
    /// Gains applied to the last block, the starting point of this block's recovery.
    private let gains: UnsafeMutablePointer<Float>
    /// Reference power spectra of the last `longestLateDelayBlocks` blocks (a ring), and the late tail's recursive sum.
    private let referencePowerHistory: UnsafeMutablePointer<Float>
    private let lateSum: UnsafeMutablePointer<Float>
    /// The reference's power held while it is not aligned, and for half a second after.
    private let hold: UnalignedReferenceHold
    private var blocksSinceFarEnd = Int.max / 2
    /// A path that moved in a far-end pause (`PausedPathMove`).
    private var pausedPathMove: PausedPathMove
    /// A talker the second linear stage does not explain (`UnexplainedOutputWatch`).
    private var unexplainedOutput: UnexplainedOutputWatch
    /// The microphone's and the reference's power over far-end blocks without a talker heard, smoothed
    /// (`microphoneGain`).
    private var farMicrophonePower: Float = 0, farReferencePower: Float = 0
    /// Blocks since the reference became aligned (0 while it is not).
    private var blocksAligned = 0
    private let longestLateDelayBlocks: Int
    /// Where the late tail starts: the linear filter's length in blocks now (`setLateTail`).
    private var lateDelayBlocks: Int
    private var lateHistoryIndex = 0
    private var lateEnergy: Float = 0
    private var lateDecay: Float = 0
    /// The share of the echo estimate's tail a block keeps (`reverberationSeconds`).
    private let tailDecay: Float
    /// The echo path's gain by which the gain takes the reference's power for echo after a restart that kept the ratios
    /// to the reference (`forgetEstimateCoupling(boundingEchoByReference:)`), fading by `restartedEchoFade` per block;
    /// 0 otherwise.
    private var restartedEchoGain: Float = 0
    /// The share of `restartedEchoGain` a block keeps: 20 dB over `restartedEchoFadeSeconds`.
    private let restartedEchoFade: Float
    private let lowestDetectionBin: Int
    private let highestDetectionBin: Int

    private static var singleTalkOverestimate: Float { 4 }
    /// Used once the near talker has been quiet for `quietSeconds`: far-end single talk for sure, where a
    /// missed word cannot be hurt, so peaks of the residual (clipping harmonics, a filter slipping) are taken firmly.
    private static var quietOverestimate: Float { 8 }
    private static var doubleTalkOverestimate: Float { 1 }
    /// The margin over the power-weighted residual estimate the detector reads (8 dB), for a leftover's peaks above
    /// its mean. At 4 (6 dB) far-end peaks passed for a talker (hot-microphone g01 ERLE 31.1 -> 28.9 dB, q03 49.7 ->
    /// 47.7); at 8 (9 dB) o08's talker gained half as much (DT STOI 0.914 -> 0.918, 0.926 at 6).
    private static var weightedDetectionMargin: Float { 6 }
    /// How much louder the detector reads a block's output where the filter finds a talker the detector does not hear
    /// likely (`isUnheardTalkerLikely`): 4.8 dB, so such a talker is heard at 1.2 dB over the estimate of what is left
    /// instead of 6. The watch already keeps the ratios from learning it; heard, it takes the gentle gain of double
    /// talk too. `HallDoubleTalkTests`' seed 91 (the far end turning loud with the talker's first word) stood 4.9-5.5
    /// dB over the estimate through its first word and went unheard for half a second without the boost (−2.06 dB
    /// over the double talk). At 2 dB a talker who starts 100-240 ms after the far-speaker f11's (as live runs on
    /// PipeWire bring it) went unheard through its first second while the watch flagged it, the ratios having learned
    /// its first words as echo before: DT STOI 0.84-0.87 against 0.90 at the scene's own timing. Over 32 timings of f11
    /// and the reverberant r08 (0-300 ms later) the mean went 0.889 -> 0.894, 13 up, none down; over our 131 tuning
    /// scenes 9 up (talker-timing x01 0.883 -> 0.908, hall w01 0.706 -> 0.732), w02 0.003 down. The watch's false
    /// flags in the halls' far-end single talk cost ERLE there (w01 46.9 -> 42.8 dB, w03 42.1 -> 38.6); the half
    /// seconds under 30 dB over all scenes stay 307. At 6 dB w03 fell to 34.6 dB for hardly more talker (the
    /// 131 scenes' mean 0.9489 against 0.9487).
    private static var unheardTalkerBoost: Float { 3 }
    /// How long after the detector last heard the talker a block that stands above the detector's estimate is still
    /// taken for the talker's (`process`).
    private static var talkerTailSeconds: Double { 0.25 }
    private static var singleTalkFloor: Float { 0.01 }
    private static var doubleTalkFloor: Float { 0.25 }
    /// The floor of double talk in a room that rings past the filter (`isRoomRingingLong`), −6 dB: at −12 dB the
    /// halls' talkers lost more than their echo (the public q03: DT STOI 0.926, 0.931 so; our reverberant r06 0.913,
    /// 0.922), and in rooms that do not ring so the leftover of a path that moved in double talk came through
    /// (our dt-change t07 and t13: 1-1.5 dB of ERLE lost), which is why it is the hall's alone.
    private static var ringingDoubleTalkFloor: Float { 0.5 }
    /// β on the rest of the talker's tail, the blocks below the detector's estimate (see `process`).
    private static var talkerTailRestOverestimate: Float { 2 }
    /// Time without any sign of the near talker before the ratios may rise: a pause between words is not
    /// enough, so a near talker the detector misses for a moment cannot teach them.
    private static var quietSeconds: Double { 0.5 }
    /// How long the detector's decision holds after the talker was last heard (`DoubleTalkDetector.hangoverFrames`; its
    /// 8 blocks held 40 ms at a call's 5 ms blocks).
    private static var hangoverSeconds: Double { 0.08 }
    /// `quietSeconds` in blocks.
    private let quietBlocks: Int
    /// Blocks left before the comfort noise's floor first tracks the output: the analysis window's blocks but the last,
    /// so that the first frame tracked has a whole window of input (the first 20 ms at 10 and 5 ms blocks). The far
    /// end's echo holds the floor where it started (`ComfortNoise.track`). A call's first
    /// 5 ms block of 8 kHz voice is the resampler's start, 40 dB under the room: started there, the output was digital
    /// silence through the far end's single talk (the public pump scene m06 at 5 ms blocks: 127 dB under the quiet
    /// stretch). The first 10 ms block's window is half the zeros before the input: with the resampler's and the DC
    /// notch's start, its lowest band read 10 dB under the room, and the line went 10 dB quiet whenever the far end
    /// talked (our quiet-pump z04, noise suppression on). A device's first zeros are another start: until the floor
    /// first tracks, a block within the stream's first `deviceSilenceSeconds` that holds a run of them
    /// (`deviceSilenceFrames`) sets the count back to `blocksAfterDeviceSilence`, so that the first frame tracked holds
    /// none of them. Counted in, a stream's first 15 ms of zeros took the line 25-123 dB under the room while the far
    /// end talked (our quiet-pump z01, z04, z05 at 10 ms blocks, the microphone's first 15 ms zeroed; 7-17 dB at 5 ms),
    /// and on a private PipeWire daemon 4 dB (z04 at 10 ms blocks, `scripts/live-pump`).
    private var blocksBeforeNoiseFloor: Int
    /// `blocksBeforeNoiseFloor` from a block that holds a device's zeros: that block and the rest of an analysis window
    /// after it (the next block, or at 5 ms blocks the next three), as before a stream's first block.
    private let blocksAfterDeviceSilence: Int
    /// Exact zeros in a row that only a device's silence gives (1 ms): a microphone's noise, notched and less the
    /// filter's estimate, never does.
    private let deviceSilenceFrames: Int
    /// Whether the comfort noise's floor has started tracking the output.
    private var isNoiseFloorTracked = false
    /// How long from a stream's start zeros are taken for the device's, not the room's: a device's first period or two
    /// (pw-record's PipeWire stream began with 40 ms of them). Zeros that last longer are a silent room (a digital
    /// source, a simulated room without noise), whose floor is nothing: waited past, the floor started from the echo's
    /// first frames and the echo passed against it (`DuckingTests`: the app's echo at -28 to -32 dBFS in the output,
    /// which ducked the app). A floor that started from longer zeros starts afresh on the room heard before any echo,
    /// and rises under the echo where the output stands clearly over it once the zeros leave its window
    /// (`ComfortNoise`).
    private static var deviceSilenceSeconds: Double { 0.04 }
    /// `deviceSilenceSeconds` in blocks.
    private let deviceSilenceBlocks: Int
    /// Blocks processed since the stream's start, counted up to `deviceSilenceBlocks`.
    private var blocksSinceStart = 0
    /// `talkerTailSeconds` in blocks.
    private let talkerTailBlocks: Int
    /// Whether the block after a talker's onset must also stand `shortBlockOnsetLeftoverMargin` over the leftover to be
    /// the filter's own error: blocks shorter than a tuned block (a call's 5 ms).
    private let judgesOnsetOverLeftover: Bool
    private static var gainRecovery: Float { 0.5 }
    /// Smoothing of `microphoneGain`'s powers per far-end block (a time constant of half a second at 10 ms blocks).
    private static var pathGainSmoothing: Float { 0.02 }
    /// Reference mean square above which the far end counts as playing.
    static var farEndMeanSquare: Float { 1e-8 }
    private static var reverberationSeconds: Double { 0.3 }
    /// How long the reference bounds the echo after a restart that kept the ratios to the reference, in seconds for 20
    /// dB of fade. Our late-dt-change u05 (a path moved in double talk, the far end back after it): ERLE 24.2 dB without
    /// the bound, 24.7 at 0.3 s, 27.1 at 0.65 s; at 1.1 and 2.3 s 27.5 and 27.6, but the talkers of paths that moved
    /// mid-way through a double talk lost more between their words (dt-change t01's DT STOI 0.906 → 0.900 and 0.895,
    /// 0.903 at 0.65 s).
    private static var restartedEchoFadeSeconds: Double { 0.65 }
    /// The span of each bucket of the held reference: the delay estimator's range (500 ms), so the hold of the
    /// current and the last bucket covers an echo that far behind its reference.
    private static var unalignedHoldSeconds: Double { 0.5 }
    /// Echo power per unit of held reference power assumed while unaligned: up to 6 dB louder than the reference
    /// (a laptop's loudspeaker turned up).
    private static var unalignedCoupling: Float { 4 }
    /// Span of the comfort noise's minimum: longer than a word or an echo burst, short enough to follow a room.
    private static var noiseWindowSeconds: Double { 3 }
    /// Span whose mean power is the comfort noise's first floor: shorter than an echo's way back from a loudspeaker.
    private static var noiseStartSeconds: Double { 0.04 }
    /// Time constant of the output/estimate cross-spectrum: long enough to average over a few syllables, short
    /// enough to catch an echo-path change.
    private static var coherenceSeconds: Double { 0.1 }
    /// How far back the second linear stage's filter reaches in the reference, and its memory (`ResidualPathKalman`).
    /// Its cost grows with the span's square: 200 ms kept two more of our 125 tuning scenes over 0.93 in double talk's
    /// STOI (both by 0.001) for 1.8 times the cost, 100 ms two fewer (hall w01 0.703, 0.706 now).
    private static var leftoverPathSeconds: Double { 0.15 }
    private static var leftoverPathMemorySeconds: Double { 1 }
    /// The second linear stage in a room that rings past the linear filter (`isRoomRingingLong`): it spans half a
    /// second of the reference up to 4 kHz, and remembers 12 s in every bin. The block filter re-learns such a room's
    /// path over many seconds (our far-speaker f11, RT60 0.77 s: 12-15 dB off 8 s after the delay was found), and
    /// what it leaves spreads over its whole length, most of it past 150 ms. Over our 131 tuning scenes double talk's
    /// STOI rose in 37 and fell in none (f11 0.902 → 0.945, r08 0.883 → 0.930, f02 0.910 → 0.957; DT PESQ 1.91 → 2.57,
    /// 2.16 → 3.08, 2.07 → 2.98), the far end's ERLE rose in 27 (f02 34.4 → 42.6 dB, the hall w03 38.6 → 47.0) and fell
    /// in one, by 0.9 dB (r02). Up to 8 kHz it gained 0.002 of STOI (f02) and 0.5-1.1 dB of ERLE in three scenes, for
    /// twice the cost at 16 kHz; each doubling of the memory from 3 s to 12 s raised STOI in 23-26 scenes and lowered it
    /// in none, to 24 s in 8 by 0.004 at most; 0.8 s of span (at 3 s) raised 5 and lowered 11.
    private static var reverberantLeftoverPathSeconds: Double { 0.5 }
    private static var reverberantLeftoverPathMemorySeconds: Double { 12 }
    private static var reverberantLeftoverPathHighestHertz: Double { 4000 }
    /// The share of the second linear stage's estimate (`ResidualPathKalman`) the detector reads as echo left, and in a
    /// room that rings past the filter (`isRoomRingingLong`; `ringingStagedEchoShare`). That stage learns a moved path
    /// under the talker, where the suppressor's ratios, learned on the old path, cannot: after the talker the new path's
    /// leftover stood over the ratios' estimate and passed for a talker, at the gentle gain of double talk (our
    /// dt-change t09: 20-37 dB per half second from 1 to 3 s after the double talk, ERLE 32.5 dB; 51-60 dB so, 40.7).
    /// At half its power, over our 131 tuning scenes ERLE rose in 14 (far-speaker f04 36.0 -> 43.6, late-dt-change u01
    /// 30.8 -> 35.1) and fell in one by 0.03 dB, double talk's STOI moved by 0.001 at most; at a call's 5 ms blocks ERLE
    /// rose in 47 (the public q08 40.4 -> 49.2, reverberant r08 28.0 -> 31.1), fell in 7 by 0.16 dB at most, STOI fell
    /// by 0.017 at most (changes c05, 0.983 -> 0.966). At its whole power t09's talker lost 0.010 of STOI (0.931 ->
    /// 0.921). In a room that rings past the filter the grown stage's estimate of a path moved under the talker took
    /// the talker's words (our hall w01: DT STOI 0.771 -> 0.720 at half, 0.744 at a quarter); at a tenth STOI moved in
    /// 2 of the 131 scenes, both up (r08 0.930 -> 0.933), ERLE rose in 16 (far-speaker f11 40.5 -> 43.2 dB, hall w02
    /// 45.4 -> 48.0; at 5 ms blocks f02 36.1 -> 40.6) and fell in 5 (soft-near o08 35.6 -> 34.3 dB, the rest by 0.14
    /// at most). Held music then showed what half left out: a passage's onset, which the filter leaves 10-20 dB more
    /// of than the notes before it, stood 4-8 dB over the stage's estimate and passed for a talker over half of it, in
    /// a tenth to a third of the far end's blocks. At the whole power (the ringing room's share kept) the three hard
    /// held-music files (`scripts/music-echo`, and as the far end through `simulate`, live and offline) read 37.6 ->
    /// 40.8 dB on average at 10 ms blocks and 32.6 -> 36.0 at 5 ms; over our 137 tuning and public scenes ERLE rose
    /// (reverberant r12 35.0 -> 48.1, pathchange p03 32.8 -> 43.9; at 5 ms r13 40.3 -> 44.8), double talk's STOI fell
    /// by more than 0.003 in t09 alone (0.931 -> 0.921, 0.922 -> 0.916 at 5 ms), and pump.py's figures did not move.
    private static var stagedEchoShare: Float { 1 }
    private static var ringingStagedEchoShare: Float { 0.1 }
    /// Magnitude-squared coherence of the output with the estimate below which the output counts as unexplained.
    private static var minimumCoherence: Float { 0.3 }
    /// Correlation of the block's output with the echo estimate (time domain, over the block) above which the
    /// output is echo the filter underestimates (a louder path), not a talker. At 0.5 the clipping scene's
    /// talker, over echo 5 dB louder, lost 0.8 dB more.
    private static var echoCorrelation: Float { 0.8 }
    /// The share of the detector's bar (`DoubleTalkDetector.ratioThreshold`) over which a block the detector does not
    /// count as the talker's is a near miss (see `process`): 1.25 dB under the bar. A talker's first syllables under the
    /// echo stood 3.3-3.9 times over the detector's estimate (the bar 4) in our changes c06 with its talker 50 and 60
    /// ms later (talker-timing x07).
    private static var nearMissShare: Float { 0.75 }
    /// Correlation of a near miss's output with the echo estimate over which it is echo the estimate underestimates
    /// and teaches the detector's ratios as any echo: our reverberant r12's far end stood 2.4-3.9 times over the
    /// estimate at 0.23-0.31 while its filter converged; talkers' first syllables −0.13 to 0.11.
    private static var nearMissEchoCorrelation: Float { 0.2 }
    /// Correlation of the block's output with the echo estimate below whose negative the output, when louder than
    /// the microphone, is the filter's own error (our scenes' quieter and shifted paths: -0.68 to -0.94 in the
    /// block after the change). An estimate uncorrelated with the microphone (a filter that found no echo) also
    /// leaves the output louder, but correlated with it only as much as the estimate's share of the output.
    private static var ownErrorCorrelation: Float { 0.5 }
    /// How much louder than the microphone the block after a talker's onset must be to be the filter's own error
    /// (1 dB): a clipping loudspeaker's overestimate at a real talker's onset stood 0.6 dB over it, anti-correlated
    /// (the public q07: DT STOI 0.945 -> 0.901 when taken so); moved paths 1.5-4 dB.
    private static var ownErrorOnsetExcess: Float { 1.26 }
    /// How far over the leftover the detector expects (its residual echo estimate over the detection band) a call's
    /// 5 ms block after a talker's onset must stand, besides `ownErrorOnsetExcess`, to be the filter's own error:
    /// 13 dB.
    /// A moved path's error stands far over the leftover learned of the path before; a talker over a filter that leaves
    /// much echo (a clipping loudspeaker, a drifting path) and pulled it with their first words stands a few dB over it,
    /// and in a block of half a tuned block's samples passed the excess too (the public q07 at 5 ms: the block 4 dB over
    /// the microphone), so that the near end counted as quiet again, the ratios learned the talker as echo, and the
    /// talker was heard half a second late (−9.5 dB over the double talk's first second; DT STOI 0.891 -> 0.945 and
    /// our dt-change t12 0.891 -> 0.912 with the margin). It costs moved paths' first half second at 5 ms (q04 28.3 ->
    /// 22.0 dB, our pathchange p05 32.6 -> 22.6), none of our scenes' re-convergence; at 10 ms blocks no talker's onset
    /// passed the excess and the margin only cost moved paths (q04 3 dB), so it is a short block's alone. It was 10 dB
    /// while a 5 ms block's spectrum spanned 10 ms; over the 20 ms it spans now (`LowDelayWindows`) the onset block of
    /// a talker who pulled a filter that leaves 10 dB of the echo stood 10-13 dB over the leftover
    /// (`ShortBlockTalkerOnsetTests`: the talker −32 dB over the half second after the onset at 10 dB); at 13 dB
    /// none of our 144 scenes' figures moved at 5 ms blocks.
    private static var shortBlockOnsetLeftoverMargin: Float { 20 }

    /// `sampleRate`: frames per second (8000 ... 48000). `blockFrameCount`: frames per block (e.g. 10 ms).
    /// `longestLateDelayBlocks`: the longest the linear filter grows to, in blocks: the furthest the late tail can
    /// start (at least one; the tail stays off until `setLateTail` gives it energy).
    /// Not real-time safe.
    public init(sampleRate: Int, blockFrameCount: Int, longestLateDelayBlocks: Int = 0) {
        precondition(sampleRate > 0 && blockFrameCount > 1, "ResidualEchoSuppressor sizes must be positive")
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
        let rate = BlockRate(blocksPerSecond: Double(sampleRate) / Double(blockFrameCount))
        windows = LowDelayWindows(blockFrameCount: blockFrameCount, blockCount: 2 * rate.blocksPerTunedBlock)
        var size = 4
        while size < windows.frameCount { size *= 2 }
        fft = RealFFT(frameCount: size)
        binCount = fft.binCount
        laneBinCount = (binCount + 3) / 4 * 4
        comfortNoise = ComfortNoise(binCount: binCount, windowFrames: rate.blocks(seconds: Self.noiseWindowSeconds),
                                    startFrames: max(1, rate.blocks(seconds: Self.noiseStartSeconds)),
                                    synthesisPowerScale: windows.generatedPowerScale(transformLength: size),
                                    framesPerWindow: windows.blockCount)
        quietBlocks = rate.blocks(seconds: Self.quietSeconds)
        leftoverExplainedSmoothing = rate.smoothingWeight(seconds: Self.leftoverExplainedSeconds)
        pausedPathMove = PausedPathMove(rate: rate)
        judgesOnsetOverLeftover = rate.blocksPerTunedBlock > 1
        unexplainedOutput = UnexplainedOutputWatch(rate: rate)
        talkerTailBlocks = rate.blocks(seconds: Self.talkerTailSeconds)
        // e^−6.9 over `reverberationSeconds`; 20 dB (e^−ln 100) over `restartedEchoFadeSeconds`.
        tailDecay = rate.decayPerBlock(seconds: Self.reverberationSeconds / 6.9)
        restartedEchoFade = rate.decayPerBlock(seconds: Self.restartedEchoFadeSeconds / log(100))
        let binHertz = Double(sampleRate) / Double(size)
        lowestDetectionBin = max(1, Int(200 / binHertz))
        highestDetectionBin = min(binCount - 1, Int(min(4000, 0.45 * Double(sampleRate)) / binHertz))

        func filled(_ count: Int, _ value: Float) -> UnsafeMutablePointer<Float> {
            let pointer = UnsafeMutablePointer<Float>.allocate(capacity: count)
            pointer.initialize(repeating: value, count: count)
            return pointer
        }
        let windowCount = windows.frameCount
        leftoverPath = ResidualPathKalman(
            laneBinCount: laneBinCount, frameCount: max(1, rate.blocks(seconds: Self.leftoverPathSeconds)),
            learningInterval: windows.blockCount / 2, leak: rate.decayPerBlock(seconds: Self.leftoverPathMemorySeconds),
            growth: ResidualPathKalman.Growth(
                frameCount: rate.blocks(seconds: Self.reverberantLeftoverPathSeconds),
                binCount: Int(Self.reverberantLeftoverPathHighestHertz * Double(windowCount) / Double(sampleRate)),
                leak: rate.decayPerBlock(seconds: Self.reverberantLeftoverPathMemorySeconds)))
        outputHistory = filled(windowCount, 0)
        detectionHistory = filled(windowCount, 0)
        detectionReal = filled(laneBinCount, 0)
        detectionImaginary = filled(laneBinCount, 0)
        estimateHistory = filled(windowCount, 0)
        referenceHistory = filled(windowCount, 0)
        frame = filled(size, 0)
        overlap = filled(blockFrameCount, 0)
        outputReal = filled(laneBinCount, 0)
        outputImaginary = filled(laneBinCount, 0)
        spareReal = filled(laneBinCount, 0)
        spareImaginary = filled(laneBinCount, 0)
        outputPower = filled(laneBinCount, 0)
        estimateTail = filled(laneBinCount, 0)
        referenceTail = filled(laneBinCount, 0)
        coupling = ResidualEchoCoupling(laneBinCount: laneBinCount, rate: rate)
        detector = DoubleTalkDetector(hangoverFrames: rate.blocks(seconds: Self.hangoverSeconds))
        blocksBeforeNoiseFloor = windows.blockCount - 1
        blocksAfterDeviceSilence = windows.blockCount
        deviceSilenceFrames = max(1, sampleRate / 1000)
        deviceSilenceBlocks = rate.blocks(seconds: Self.deviceSilenceSeconds)
        audibleResidualEcho = filled(laneBinCount, 0)
        residualEcho = filled(laneBinCount, 0)
        coherentEcho = filled(laneBinCount, 0)
        crossReal = filled(laneBinCount, 0)
        crossImaginary = filled(laneBinCount, 0)
        estimatePower = filled(laneBinCount, 0)
        smoothedOutputPower = filled(laneBinCount, 0)
        coherenceSmoothing = rate.decayPerBlock(seconds: Self.coherenceSeconds)
        gains = filled(laneBinCount, 1)
        self.longestLateDelayBlocks = max(1, longestLateDelayBlocks)
        lateDelayBlocks = self.longestLateDelayBlocks
        referencePowerHistory = filled(self.longestLateDelayBlocks * laneBinCount, 0)
        noise = filled(laneBinCount, 0)
        lateSum = filled(laneBinCount, 0)
        hold = UnalignedReferenceHold(laneBinCount: laneBinCount,
                                      bucketBlocks: Int(Self.unalignedHoldSeconds * Double(sampleRate)) / blockFrameCount)
    }

    deinit {
        for pointer in [outputHistory, estimateHistory, referenceHistory, frame, overlap, outputReal,
                        outputImaginary, spareReal, spareImaginary, outputPower, estimateTail, referenceTail,
                        audibleResidualEcho, residualEcho, coherentEcho, crossReal, crossImaginary, estimatePower,
                        smoothedOutputPower, gains, referencePowerHistory, lateSum, noise, detectionHistory, detectionReal,
                        detectionImaginary] {
            pointer.deallocate()
        }
    }

    /// One block: `output` is the linear canceller's output e, replaced in place by the suppressed signal
    /// (one block late); `echoEstimate` is y = microphone − e; `reference` is the delay-aligned loudspeaker
    /// signal fed to the canceller. All three hold `blockFrameCount` frames. `declippedOutput`: the output with a
    /// clipping microphone's distortion taken off, which the detector reads instead on a block whose microphone clipped
    /// (`isMicrophoneClipped`, this block or the last); the gain works on the output. Real-time safe.
    public func process(output: UnsafeMutableBufferPointer<Float>, echoEstimate: UnsafeBufferPointer<Float>,
                        reference: UnsafeBufferPointer<Float>, declippedOutput: UnsafeBufferPointer<Float>? = nil) {
        let h = blockFrameCount
        guard output.count == h, echoEstimate.count == h, reference.count == h,
              let e = output.baseAddress, let y = echoEstimate.baseAddress, let x = reference.baseAddress else { return }
        var referenceMeanSquare: Float = 0
        for i in 0..<h { referenceMeanSquare += x[i] * x[i] }
        let farEndActive = referenceMeanSquare / Float(h) > Self.farEndMeanSquare
        blocksSinceFarEnd = farEndActive ? 0 : min(blocksSinceFarEnd + 1, Int.max / 2)
        // Unaligned or just aligned, and the far end played within the hold: its sound is taken for echo.
        blocksAligned = isReferenceAligned ? min(blocksAligned + 1, Int.max / 2) : 0
        let holdsReference = blocksAligned <= hold.bucketBlocks
        let holding = holdsReference && blocksSinceFarEnd < 2 * hold.bucketBlocks

        // Reference and echo estimate: power spectra with a reverberant tail. Every per-bin loop runs on four
        // bins at a time (`laneBinCount`), with the scalar code's operations in the same order.
        analyse(x, history: referenceHistory, real: spareReal, imaginary: spareImaginary)
        leftoverPath.add(referenceReal: spareReal, referenceImaginary: spareImaginary)
        // The ring's slot `lateHistoryIndex` takes this block's reference power; `lateDelayBlocks` back is the one
        // the late tail starts from.
        let newest = referencePowerHistory + lateHistoryIndex * laneBinCount
        let delayed = referencePowerHistory
            + (lateHistoryIndex + longestLateDelayBlocks - lateDelayBlocks) % longestLateDelayBlocks * laneBinCount
        lateHistoryIndex = (lateHistoryIndex + 1) % longestLateDelayBlocks
        let decay = BinLanes(repeating: tailDecay), lateDecayLanes = BinLanes(repeating: lateDecay)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let re = lanes(spareReal, k), im = lanes(spareImaginary, k)
            let p = re * re + im * im
            store(maximum(p, decay * lanes(referenceTail, k)), referenceTail, k)
            store(lateDecayLanes * lanes(lateSum, k) + lanes(delayed, k), lateSum, k)
            store(p, newest, k)
        }
        if holdsReference { hold.add(power: newest) }
        analyse(y, history: estimateHistory, real: spareReal, imaginary: spareImaginary)
        var estimateSums = BinLanes()
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let re = lanes(spareReal, k), im = lanes(spareImaginary, k)
            let tail = maximum(re * re + im * im, decay * lanes(estimateTail, k))
            store(tail, estimateTail, k)
            estimateSums += tail
        }
        let totalEstimate = estimateSums.sum()
        // Far-end single talk for sure: the spread of a loudspeaker's distortion is taken off only then.
        let spreadEstimate = BinLanes(repeating: isNearEndQuiet ? totalEstimate : 0)
        analyse(e, history: outputHistory, real: outputReal, imaginary: outputImaginary)
        // The second linear stage learns on every block the filter finds echo in; while it finds none (a headset) it
        // stays at its start. The gain below is reckoned on the block filter's output, as before, and applied to
        // what the stage leaves.
        let cancelsLeftover = estimateEchoShare == 1
        if leftoverPath.isReset || !cancelsLeftover { unexplainedOutput.restart() }
        if cancelsLeftover {
            leftoverPath.cancel(outputReal: outputReal, outputImaginary: outputImaginary)
        } else if !leftoverPath.isReset {
            leftoverPath.reset()
        }
        let gainedReal = cancelsLeftover ? leftoverPath.cleanedReal : outputReal
        let gainedImaginary = cancelsLeftover ? leftoverPath.cleanedImaginary : outputImaginary
        blocksSinceClipped = isMicrophoneClipped ? 0 : min(blocksSinceClipped + 1, Int.max / 2)
        let clipped = blocksSinceClipped < windows.blockCount
        // A clipped microphone's distortion, which no linear filter takes off, varies with how far each echo peak
        // went past full scale: once the filter had learned the echo, the deepest clipped peaks passed for a talker.
        // The detector reads a clipped block's output without it.
        let declipped = clipped ? declippedOutput.flatMap { $0.count == h ? $0.baseAddress : nil } : nil
        analyse(declipped ?? UnsafePointer(e), history: detectionHistory, real: detectionReal, imaginary: detectionImaginary,
                transforms: declipped != nil)
        let keep = BinLanes(repeating: coherenceSmoothing), add = BinLanes(repeating: 1 - coherenceSmoothing)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let er = lanes(outputReal, k), ei = lanes(outputImaginary, k)
            let yr = lanes(spareReal, k), yi = lanes(spareImaginary, k)
            let power = er * er + ei * ei
            store(power, outputPower, k)
            store(keep * lanes(crossReal, k) + add * (er * yr + ei * yi), crossReal, k)
            store(keep * lanes(crossImaginary, k) + add * (ei * yr - er * yi), crossImaginary, k)
            store(keep * lanes(estimatePower, k) + add * (yr * yr + yi * yi), estimatePower, k)
            store(keep * lanes(smoothedOutputPower, k) + add * power, smoothedOutputPower, k)
        }
        // A talker heard within the last half second may talk longer than the noise window. The noise that fills the
        // suppressed bins holds its floor through any talk: a talker who went on through a far-end pause lifted it,
        // and the far end's blocks after the talk were filled with the talk's level for a second or more (clip
        // scene k02: 10-20 dB above the room, ERLE 26.6 dB; 29.1 held). The detector and the ratios keep the
        // floor that may rise in the far end's pauses: read against the held one, a long tail's leftovers after
        // double talk passed for a talker (our pathchange scene p07: 39.0 -> 32.6 dB).
        // The floor starts once the output's first blocks are past (`blocksBeforeNoiseFloor`).
        if !isNoiseFloorTracked && blocksSinceStart < deviceSilenceBlocks
            && Self.holdsZeros(e, count: h, inARow: deviceSilenceFrames) {
            blocksBeforeNoiseFloor = blocksAfterDeviceSilence
        }
        blocksSinceStart = min(blocksSinceStart + 1, deviceSilenceBlocks)
        if blocksBeforeNoiseFloor > 0 {
            blocksBeforeNoiseFloor -= 1
        } else {
            isNoiseFloorTracked = true
            comfortNoise.track(power: outputPower, echo: residualEcho, holdsRise: !isNearEndQuiet,
                               backgroundHoldsRise: farEndActive && !isNearEndQuiet)
        }
        noise.update(from: comfortNoise.backgroundPower, count: binCount)

        // Residual echo estimate and the double-talk decision.
        var residualSums = BinLanes(), outputSums = BinLanes(), noiseSums = BinLanes(), stagedSums = BinLanes()
        var coherentSums = BinLanes()
        let lateEnergyLanes = BinLanes(repeating: lateEnergy)
        let farEnd = BinMask(repeating: farEndActive)
        let margin = BinLanes(repeating: Self.weightedDetectionMargin)
        let binIndex = SIMD4<Int32>(0, 1, 2, 3)
        // A clipped block with no talker heard is judged against the clipped blocks' own estimate too: a hot
        // microphone's clipped echo at the far end's return after a pause passed the other for a talker, and the gentle
        // gain of double talk let that echo through at 11-16 dB for two seconds (`HotMicrophoneTests`). A talker heard
        // already is followed against the lower one (judged against both, our g07's DT STOI 0.862 instead of 0.871).
        let isClippedOnset = clipped && !detector.nearEndActive
        let echoShare = BinLanes(repeating: estimateEchoShare)
        let stagedShare = BinLanes(repeating: isRoomRingingLong ? Self.ringingStagedEchoShare : Self.stagedEchoShare)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let noiseK = lanes(noise, k), estimate = lanes(estimateTail, k)
            let echoActive = farEnd .| (estimate .> noiseK)
            let late = lateEnergyLanes * lanes(lateSum, k)
            let echoMask = .!(echoActive .| (late .> noiseK))
            let linear = lanes(coupling.leakage, k) * estimate, reference = lanes(referenceTail, k)
            let unmodelled = maximum(lanes(coupling.referenceCoupling, k) * reference,
                                     lanes(coupling.spreadCoupling, k) * spreadEstimate)
            let learned = maximum(linear, unmodelled)
            // A clipped block's gain takes the larger of the two ratios' estimates (`ResidualEchoCoupling`).
            let leftover = clipped ? maximum(learned, maximum(lanes(coupling.clippedLeakage, k) * estimate,
                                                              lanes(coupling.clippedReferenceCoupling, k) * reference))
                                   : learned
            let residual = (leftover + late).replacing(with: 0, where: echoMask)
            let audibleReference = lanes(coupling.audibleCoupling, k) * reference
            let audible = (maximum(linear, audibleReference) + late).replacing(with: 0, where: echoMask)
            // The detector reads the lower of its two estimates, the power-weighted one with a margin for the
            // leftover's peaks (`ResidualEchoCoupling`), unless the filter finds the output leaked echo.
            let pessimistic = maximum(lanes(coupling.audibleLeakage, k) * estimate, audibleReference)
            let mean = maximum(lanes(coupling.weightedAudibleLeakage, k) * estimate,
                               lanes(coupling.weightedAudibleCoupling, k) * reference)
            let heard = filterFindsLeakedEcho ? pessimistic : minimum(pessimistic, margin * mean)
            let clippedHeard = clipped ? maximum(heard, isClippedOnset ? leftover : learned) : heard
            let detectable = (clippedHeard + late).replacing(with: 0, where: echoMask)
            // The part of the output the estimate predicts linearly is echo the filter has not caught up with
            // (a louder or moved path): it counts at once, before the learned ratios follow, as far as the estimate is
            // echo (`estimateEchoShare`).
            // Chance coherence of a near talker over so short an average is far below `minimumCoherence`.
            let crossRe = lanes(crossReal, k), crossIm = lanes(crossImaginary, k)
            let explained = (crossRe * crossRe + crossIm * crossIm) / (lanes(estimatePower, k) + 1e-20)
            let coherent = (explained * echoShare).replacing(
                with: 0, where: .!(echoActive .& (explained .> Self.minimumCoherence * lanes(smoothedOutputPower, k))))
            let held = Self.unalignedCoupling * hold.held(k)
            store(holding ? maximum(residual, held) : residual, residualEcho, k)
            store(audible, audibleResidualEcho, k)
            store(coherent, coherentEcho, k)
            let bin = binIndex &+ Int32(k)
            let detection = (bin .>= Int32(lowestDetectionBin)) .& (bin .<= Int32(highestDetectionBin))
            // The leftover the second linear stage estimates (the output less what it leaves) is echo too, in part.
            let stagedRe = lanes(outputReal, k) - lanes(gainedReal, k)
            let stagedIm = lanes(outputImaginary, k) - lanes(gainedImaginary, k)
            let stagedPower = stagedRe * stagedRe + stagedIm * stagedIm
            residualSums += maximum(maximum(detectable, coherent), stagedShare * stagedPower)
                .replacing(with: 0, where: .!detection)
            stagedSums += stagedPower.replacing(with: 0, where: .!detection)
            coherentSums += coherent.replacing(with: 0, where: .!detection)
            // The output counts at most at twice the microphone's power (|E + Y|²): more is the filter's own
            // pre-echo at a music onset, which no talker makes.
            let microphoneRe = lanes(outputReal, k) + lanes(spareReal, k)
            let microphoneIm = lanes(outputImaginary, k) + lanes(spareImaginary, k)
            let microphone = microphoneRe * microphoneRe + microphoneIm * microphoneIm
            let detectedRe = lanes(detectionReal, k), detectedIm = lanes(detectionImaginary, k)
            let detected = declipped == nil ? lanes(outputPower, k) : detectedRe * detectedRe + detectedIm * detectedIm
            outputSums += minimum(detected, 2 * microphone).replacing(with: 0, where: .!detection)
            noiseSums += noiseK.replacing(with: 0, where: .!detection)
        }
        var crossSum: Float = 0, estimateSum: Float = 0, outputSum: Float = 0, microphoneSum: Float = 0
        for i in 0..<h {
            crossSum += e[i] * y[i]; estimateSum += y[i] * y[i]; outputSum += e[i] * e[i]
            microphoneSum += (e[i] + y[i]) * (e[i] + y[i])
        }
        let correlationScale = (estimateSum * outputSum).squareRoot()
        let echoLike = estimateEchoShare == 1 && crossSum > Self.echoCorrelation * correlationScale
        // The detection band's powers: the output, the echo the detector reads as left, the noise.
        let bandOutput = outputSums.sum(), bandResidual = residualSums.sum()
        let bandNoise = noiseSums.sum(), bandStaged = stagedSums.sum()
        // Output louder than the microphone and against the estimate is the filter's own error where the echo fell
        // away or moved under it (a quieter or shifted path), not a talker: suppressed like `isOutputFilterError`.
        // Judged only once the near end has been quiet for half a second: in double talk a filter the talker pulled
        // does the same, and one restarted there (a path that moved under the talker) learns from the talker at its
        // start-up rate, its error louder than the microphone in most blocks between the talker's words, which a
        // detector that had just heard the talker then took for no talker (dt-change t09: talker -2.44 dB, -1.94 now).
        // The block after a talker's onset that broke such a silence is judged too, if louder still
        // (`ownErrorOnsetExcess`): a path's first block after a move, its error still below the microphone, passed for
        // a talker, and the quiet that judges the next ones was gone (the public q04: 7 dB over the 250 ms after its
        // move, 20.5 now). At a call's 5 ms blocks it must also stand over the leftover the detector expects
        // (`shortBlockOnsetLeftoverMargin`).
        let isFreshOnset = detector.isFreshOnset(afterQuietFrames: quietBlocks)
        let isOnsetOverLeftover = !judgesOnsetOverLeftover || bandOutput > Self.shortBlockOnsetLeftoverMargin * bandResidual
        let isOwnError = ((isNearEndQuiet && outputSum > microphoneSum)
                          || (isFreshOnset && outputSum > Self.ownErrorOnsetExcess * microphoneSum && isOnsetOverLeftover))
            && crossSum < -Self.ownErrorCorrelation * correlationScale
        // A path that moved while the far end was silent leaves the output louder than the microphone at its return,
        // a talker heard or not (`PausedPathMove`): that block is suppressed as the filter's error. The detector still
        // hears it, so that a talker heard keeps the shadow's takeover under a talker (dismissed, our late-dt-change
        // u05's filter was reset from nothing instead, and its echo passed for a talker again 0.3 s later).
        let isMovedInPause = pausedPathMove.observe(farEndActive: farEndActive, outputEnergy: outputSum,
                                                    microphoneEnergy: microphoneSum, isFilterSettled: isFilterSettled)
        let isFilterError = isOutputFilterError || isOwnError || isMovedInPause
        wasOutputFilterError = isFilterError
        // A block the filter finds clearly leaked echo, while the near end was quiet or only just broke its quiet, is
        // echo the filter has not learned (the far end back after a pause with sound the filter learned little of, a
        // path that grew), not a talker who starts: taken for one, it passed at the gentle gain of double talk, and the
        // ratios, which learn upward only without a talker, did not catch up (our u01: 0.2 s at 10-24 dB after a pause,
        // that half second's ERLE 23 dB, 50 now; c03 49.3 -> 52.6 dB). Dismissed, it teaches the ratios as echo: at
        // the lower bar of `filterFindsLeakedEcho` the onset of a talker over a hot microphone's echo was taught so,
        // and the talker lost 7 dB (`HotMicrophoneTests`). A talker heard already is not dismissed so.
        let isLeakedAfterQuiet = filterFindsClearlyLeakedEcho && (isNearEndQuiet || isFreshOnset)
        let isDismissed = echoLike || isOwnError || isLeakedAfterQuiet
        let detectedOutput = bandOutput, detectedResidual = bandResidual, detectedNoise = bandNoise
        if farEndActive {
            let explained = min(1, bandStaged / max(bandOutput, 1e-20))
            leftoverExplainedShare += leftoverExplainedSmoothing * (explained - leftoverExplainedShare)
        }
        // A talker the filter or the second linear stage finds the detector may not hear.
        let isUnexplained = unexplainedOutput.observe(
            outputPower: bandOutput, stagedEchoPower: bandStaged, coherentEchoPower: coherentSums.sum(),
            noisePower: bandNoise, farEndActive: farEndActive, isNearEndQuiet: isNearEndQuiet,
            isJudged: isRoomRingingLong && !filterFindsLeakedEcho)
        let isTalkerUnheard = isUnheardTalkerLikely || isUnexplained
        let heardOutput = isTalkerUnheard ? Self.unheardTalkerBoost * detectedOutput : detectedOutput
        detector.update(outputPower: isDismissed || holding || isOutputFilterError ? 0 : heardOutput,
                        residualEchoPower: detectedResidual, noisePower: detectedNoise, farEndActive: farEndActive)
        if isDismissed { detector.dismissFrame() }
        // The talker's tail: a block within a quarter second of the talker, its output above the detector's estimate of
        // the echo left and the noise, is still the talker's (a word's softer end, the room's reverberation of it), and
        // takes the gentle gain of double talk. Past the detector's 80 ms hangover such blocks took the firm gain of
        // far-end single talk, and a reverberant hall's talker 5 dB under the echo lost them: the public q03 and m03
        // (RT60 0.55 s) DT PESQ 1.85 and 1.93, STOI 0.919 and 0.911, against 2.10 and 2.10, 0.922 and 0.918 now. Not
        // where the filter finds the output leaked echo or started over in the last 2 s, nor below the estimate: held
        // so, the leftover of a path that moved or got louder in double talk passed after the talker (our dt-change
        // t02, t12 and late-dt-change u04: 3-5 dB of ERLE lost; t02, whose louder path restarts nothing, still 1.5).
        let isWithinTalkerTail = !detector.nearEndActive && detector.framesSinceNearEnd < talkerTailBlocks
            && !isDismissed && !filterFindsLeakedEcho && !isOutputLeakedEcho && isFilterSettled
        let isTalkerTail = isWithinTalkerTail && detectedOutput > detectedResidual + detectedNoise
        let nearEnd = detector.nearEndActive || isTalkerTail
        // The rest of the talker's tail, the gaps between words, holds the talker's soft ends and, in a room that rings
        // past the filter, its reverberation as much as the echo: taken firmly (−40 dB), it cut the gaps between a
        // hall's words (the public q03: DT PESQ 2.10, 2.30 so; the public q08 and m03 +0.12 and +0.10), and in other
        // rooms gated the talker between its words (our 144 scenes' DT PESQ 2.948 -> 2.962 at 10 ms blocks, 2.815 ->
        // 2.830 at 5 ms; clip-drift j01 1.77 -> 1.88, DT STOI 0.929 -> 0.932), for 0.2-2.4 dB of ERLE where the far
        // end's single talk follows double talk (dt-change t12 at 5 ms blocks 47.9 -> 45.5 dB).
        let isTalkerTailRest = isWithinTalkerTail && !isTalkerTail && !isFilterError

        // How much louder than the reference the echo comes back (`microphoneGain`), learned while the reference is held
        // too (no talker is heard then; one talking would raise it): the filter starts over at the delay's lock, and
        // a hot microphone's ratios restart from the gain learned by then (our g05 and g06, 12 and 18 dB hot with a
        // 250 ms delay: ERLE 26 and 24 dB, 44 and 40 dB learned so).
        if farEndActive && !nearEnd {
            farMicrophonePower += Self.pathGainSmoothing * (microphoneSum - farMicrophonePower)
            farReferencePower += Self.pathGainSmoothing * (referenceMeanSquare - farReferencePower)
        }
        // Learn how much echo is left (`ResidualEchoCoupling`). While the reference is held, a leftover may be the
        // near talker the detector is not asked about: downward only.
        // A block just under the detector's bar that the estimate does not explain is as likely a talker's first
        // syllable under the echo as echo the ratios underestimate: learned at the full rate, it raised the
        // detector's estimate of the echo left 2-fold within 30 ms, and the talker's next words stood under it (our
        // changes c06 with its talker 60 ms later, talker-timing x07: unheard for 2.5 s, DT STOI 0.76; 0.96 so). The
        // detector's ratios then only creep up; the gain's learn as before. Not in a room that rings past the filter,
        // whose leftover stands near the bar often and where `UnheardTalkerWatch` tells an unheard talker (our hall
        // w03 lost 3-7 dB of ERLE to echo taken for a talker once the ratios had not learned it), nor from a block
        // the filter finds leaked or dismissed.
        let isNearMiss = !nearEnd && !isDismissed && !filterFindsLeakedEcho && !isOutputLeakedEcho
            && !isRoomRingingLong
            && detectedOutput > Self.nearMissShare * detector.ratioThreshold * (detectedResidual + detectedNoise)
            && crossSum < Self.nearMissEchoCorrelation * correlationScale
        if farEndActive && !isOutputFilterError {
            coupling.learn(outputPower: outputPower, noise: noise, lateEnergy: lateEnergy, lateSum: lateSum,
                           estimate: estimateTail, reference: referenceTail, totalEstimate: totalEstimate,
                           isQuiet: (isNearEndQuiet && !isTalkerUnheard) || isOutputLeakedEcho, mayRise: !holding,
                           echoPathGain: microphoneGain, isMicrophoneClipped: clipped, isNearMiss: isNearMiss)
        }

        let overestimate = nearEnd ? Self.doubleTalkOverestimate : isTalkerTailRest ? Self.talkerTailRestOverestimate
            : isNearEndQuiet ? Self.quietOverestimate : Self.singleTalkOverestimate
        let doubleTalkFloor = isRoomRingingLong ? Self.ringingDoubleTalkFloor : Self.doubleTalkFloor
        let floor = BinLanes(repeating: isFilterError ? Self.singleTalkFloor : nearEnd ? doubleTalkFloor
                             : isTalkerTailRest ? Self.doubleTalkFloor : Self.singleTalkFloor)
        let one = BinLanes(repeating: 1)
        let restartedEcho = BinLanes(repeating: farEndActive ? restartedEchoGain : 0)
        restartedEchoGain *= restartedEchoFade
        var keptSums = BinLanes(), inputSums = BinLanes()
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            // While the near end talks the coherent part is left out: a talker's chance coherence with the
            // estimate over a short average would cost it a dB; so is the bound after a restart.
            let residual = nearEnd ? lanes(audibleResidualEcho, k)
                : maximum(maximum(lanes(residualEcho, k), lanes(coherentEcho, k)),
                          restartedEcho * lanes(referenceTail, k))
            let power = lanes(outputPower, k)
            let target = isFilterError ? floor
                : maximum(floor, minimum(one, 1 - overestimate * residual / (power + 1e-20)))
            let previous = lanes(gains, k)
            let gain = (previous + Self.gainRecovery * (target - previous)).replacing(with: target, where: target .< previous)
            store(gain, gains, k)
            keptSums += gain * gain * power
            inputSums += power
            store(lanes(gainedReal, k) * gain, outputReal, k)
            store(lanes(gainedImaginary, k) * gain, outputImaginary, k)
        }
        let keptSum = keptSums.sum(), inputSum = inputSums.sum()
        suppressionDecibels = inputSum > 0 ? 10 * log10(max(keptSum, 1e-30) / inputSum) : 0
        comfortNoise.add(toReal: outputReal, imaginary: outputImaginary, gains: gains)

        // Synthesis: inverse transform, window, overlap-add; the synthesis window spans the analysis window's last two
        // blocks, the first of which completes the previous block.
        fft.inverse(real: outputReal, imaginary: outputImaginary, output: frame)
        let first = windows.frameCount - 2 * h, synthesis = windows.synthesis
        for i in 0..<h {
            e[i] = overlap[i] + frame[first + i] * synthesis[first + i]
            overlap[i] = frame[first + h + i] * synthesis[first + h + i]
        }
    }

    /// The microphone's power over the reference's while the far end plays and no talker is heard, at least 1: how
    /// much louder than the loudspeaker's signal the echo may come back (a hot microphone beside a loud loudspeaker:
    /// 10-20 dB), the most the reference's ratios learn (times their usual ceiling) and where they restart
    /// (`forgetEchoCoupling`).
    private var microphoneGain: Float { max(1, farMicrophonePower / max(farReferencePower, 1e-20)) }

    /// Forgets how much echo the linear filter leaves (back to the pessimistic start, the ratios to the reference at
    /// the echo path's gain), e.g. after the filter was reset; the noise floor and the signal histories stay.
    /// Real-time safe.
    public func forgetEchoCoupling() { coupling.forget(echoPathGain: microphoneGain) }

    /// Forgets the second linear stage's path (the linear filter started over: its leftover is another). Real-time safe.
    public func forgetLeftoverPath() {
        leftoverPath.reset()
        leftoverExplainedShare = 0
    }

    /// Forgets how much echo the linear filter leaves per unit of its estimate, and keeps, with a margin, how much
    /// per unit of the reference: for a filter reset after it took next to nothing off, whose leftover the suppressor
    /// already measured as the whole echo (a headset's microphone, where the filter finds no echo and a near talker
    /// pulls it: a pessimistic start took a talker 19 dB under the far end for echo, and the ratios then learned it
    /// as such). `boundingEchoByReference`: the filter started over under a talker heard for a second, its leftover until
    /// then far less than the echo: where no talker is heard, the gain takes the reference's power times the echo path's
    /// gain for echo too, fading over `restartedEchoFadeSeconds` (the bound ends at the next call without it).
    /// Real-time safe.
    public func forgetEstimateCoupling(boundingEchoByReference: Bool = false) {
        coupling.forgetEstimateCoupling()
        restartedEchoGain = boundingEchoByReference ? microphoneGain : 0
    }

    /// Forgets the near-end decision (its hangover included): what it heard was echo, e.g. a path that had just
    /// moved. Real-time safe.
    public func forgetNearEnd() { detector.reset() }

    /// Ends the near-end decision's hangover (`DoubleTalkDetector.dismissFrame`): a talker the next block does not show
    /// is no longer taken for one, and a talker heard in a single block just before is taken back as the echo's onset.
    /// Real-time safe.
    func endNearEndHangover() { detector.dismissFrame() }

    /// The late tail past the linear filter: tap energy of the first block beyond it and the energy fall per block
    /// (`EchoTailEstimator`'s figures), and the filter's length in blocks, where the tail starts (1 to
    /// `longestLateDelayBlocks`); zero energy turns it off. Real-time safe.
    public func setLateTail(energyPastEnd: Float, decayPerBlock: Float, delayBlocks: Int) {
        lateEnergy = energyPastEnd.isFinite ? max(0, energyPastEnd) : 0
        lateDecay = decayPerBlock.isFinite ? min(max(decayPerBlock, 0), 0.999) : 0
        lateDelayBlocks = min(max(delayBlocks, 1), longestLateDelayBlocks)
    }

    /// Whether `count` samples from `block` hold `inARow` exact zeros in a row. Real-time safe.
    private static func holdsZeros(_ block: UnsafePointer<Float>, count: Int, inARow: Int) -> Bool {
        var run = 0
        for i in 0..<count {
            run = block[i] == 0 ? run + 1 : 0
            if run >= inARow { return true }
        }
        return false
    }

    /// Shifts `block` into the analysis window's `history` and, unless `transforms` is false (the history only kept),
    /// transforms the windowed history.
    private func analyse(_ block: UnsafePointer<Float>, history: UnsafeMutablePointer<Float>,
                         real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>, transforms: Bool = true) {
        let h = blockFrameCount, count = windows.frameCount, analysis = windows.analysis
        history.update(from: history + h, count: count - h)
        (history + count - h).update(from: block, count: h)
        guard transforms else { return }
        for i in 0..<count { frame[i] = history[i] * analysis[i] }
        (frame + count).update(repeating: 0, count: fft.frameCount - count)
        fft.forward(frame, real: real, imaginary: imaginary)
    }

}
