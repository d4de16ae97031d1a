import Glibc

/// How the voice-processing chain is tuned. Values are fixed when the chain is built.
public struct EchoPipelineSettings: Sendable, Hashable {
    /// The echo tail the adaptive filter covers after bulk-delay alignment, in milliseconds.
    public var filterLengthMilliseconds: Double = 200
    /// The least echo tail it grows to, once, in a room that rings past `filterLengthMilliseconds` (`LongRoomWatch`; see
    /// `reverberantRoomFilterLengthMilliseconds`); at most `filterLengthMilliseconds`: it does not grow. A filter this
    /// long from the start follows a drifting clock or a moved path more slowly in the short rooms most calls are in
    /// (our q07, −200 ppm: DT STOI 0.930 → 0.877).
    public var longRoomFilterLengthMilliseconds: Double = 260
    /// The longest echo tail it grows to in a room that rings past the filter: half the room's reverberation time (RT60,
    /// as `LongRoomWatch` reads it; the echo 30 dB down), at least `longRoomFilterLengthMilliseconds`. Past a 200 ms
    /// filter a room of 0.7 s leaves its echo 10-14 dB down, and a talker 5 dB under the echo went unheard through the
    /// double talk (our reverberant r08: DT STOI 0.42, 0.89 at 370 ms). Rooms of 0.44-0.68 s grow so too (to 260-340
    /// ms): held at 260 ms, our far-speaker f01 (RT60 0.64 s) and reverberant r04 (0.55 s) read DT STOI 0.915 and 0.923,
    /// 0.940 and 0.938 grown (DT STOI up in 16 of our 125 tuning scenes, down in none). Grown so, r07 (0.55 s) had lost
    /// its talker (DT STOI 0.84) until the misadjustment monitor stopped taking a grown filter's talker for a moved path
    /// (`EchoPipeline.process`): 0.927 now, the talker −0.74 dB (0.923 and −0.37 at 260 ms).
    public var reverberantRoomFilterLengthMilliseconds: Double = 400
    /// The share of its step the adapted filter takes while the residual echo suppressor's detector hears a near
    /// talker (`EchoCanceller.nearTalkerStepShare`), 0 to 1; 1: the whole step. At 0.6 over the 87 scenes of our sets
    /// the near talker's PESQ in double talk rose by 0.15 (median) and no talker lost more than 1.8 dB (2.3 before),
    /// while after a path moved in double talk the echo was cancelled 16 dB less in one of the 14 dt-change scenes
    /// (t01: 34 dB), 6 dB less in another (t10: 32 dB), 1 dB less in three and 1-6 dB more in four; at 0.7 PESQ rose
    /// by 0.12 and one talker lost 2.0 dB; at 0.5 the echo after the double talk fell to 12 dB in t14; with the
    /// start-up rate taken whole, a talker under a moved path lost 2.6 dB (t09).
    public var nearTalkerStepShare: Float = 0.6
    /// The same share at blocks shorter than the tuned 10 ms (a call's 5 ms), 0 to 1, once the filter has gone two
    /// seconds without starting over (`EchoPipeline`'s settled filter). Adapted twice as often on half the error each
    /// time, the filter there follows a talker further: at 0.45 over our 137 tuning and public scenes at 5 ms blocks
    /// the near talker's PESQ in double talk rose by 0.03 on average and by up to 0.18, and no scene lost more than
    /// 0.041 of it, 0.002 of STOI or 0.43 dB of ERLE. A filter that started over lately relearns a moved path under the
    /// talker at `nearTalkerStepShare`: at 0.45 there, our hall-dt-change w03 left its echo after the double talk 15 dB
    /// less cancelled (ERLE 40.6 -> 25.0 dB). At 0.36 a talker starting over a drifting clock's echo passed for a moved
    /// path (our louder-move v07: DT STOI 0.97 -> 0.79). At 10 ms blocks 0.45 cost hot-microphone g08's talker 2.2 dB
    /// and hall-dt-change w02 18 dB of ERLE, so 10 ms blocks keep `nearTalkerStepShare`.
    public var settledShortBlockNearTalkerStepShare: Float = 0.45
    /// Whether stationary noise is attenuated. Residual echo suppression stays on either way.
    public var isNoiseSuppressionEnabled = true
    /// Maximum noise attenuation in dB (negative).
    public var noiseSuppressionDB = -15
    /// Level the gain control steers speech towards, in dBFS (RMS).
    public var agcTargetDBFS: Double = -18
    /// Most gain the gain control may add, in dB.
    public var agcMaxGainDB = 30

    public init() {}
}

/// The processing stage: our MDF echo cancellation (`EchoCanceller`) → our per-bin residual echo suppression (with double-talk
/// detection and comfort noise) → speexdsp noise suppression → automatic gain control, on fixed blocks at the
/// voice rate. The canceller's DC notch (3 dB down at 65 Hz at 16 kHz) is narrowed to the voice's (at 40 Hz) before
/// residual echo suppression (`DCNotch.voiceRadius`).
///
/// The residual echo suppressor (`ResidualEchoSuppressor`) works from the linear filter's echo estimate and the
/// reference, so it adds one block of latency (`latencyFrames`). Gain control can be switched per block
/// (`isAGCEnabled`). Not thread safe: the real-time thread owns it.
public final class EchoPipeline: VoiceProcessor {
    public let blockFrameCount: Int
    public let sampleRate: Int
    public let settings: EchoPipelineSettings
    /// Processed RMS above which the near end counts as talking, in dBFS. (speexdsp's own VAD is a placeholder
    /// that warns on standard error when enabled, so the level after suppression decides.)
    public static let voiceActivityThresholdDBFS: Float = -40
    private let canceller: EchoCanceller
    private let suppressor: ResidualEchoSuppressor
    private let preprocessor: Preprocessor
    private let microphone: UnsafeMutableBufferPointer<Int16>
    private let reference: UnsafeMutableBufferPointer<Int16>
    private let cancelled: UnsafeMutableBufferPointer<Int16>
    private let error: UnsafeMutableBufferPointer<Float>
    private let echoEstimate: UnsafeMutableBufferPointer<Float>
    /// The filter's output with a clipping microphone's distortion taken off, which the suppressor's detector reads
    /// on a clipped block (`cancel`).
    private let declipped: UnsafeMutableBufferPointer<Float>
    /// The distortion clipped samples leave in the output through the DC notch (a slow tail after each clipped peak).
    private var clipDistortion: DCNotch
    /// Share of the clipping level the echo estimate must reach, in the clipped sample's direction, for the echo to
    /// explain the clipping (the sample's output then counts as distortion).
    private static var clippedEchoMinimumShare: Float { 0.5 }
    private var misadjustment: MisadjustmentMonitor
    /// Whether the microphone hears echo at all (kept across the filter's restarts).
    private var echoPresence: EchoPresence
    /// How much of the microphone the filter's estimate explains, which weighs the estimate while it found no echo.
    private var explained: ExplainedShare
    /// Whether the suppressor's detector takes the filter's leaked echo for a talker (after a path change in double talk).
    private var leakedEcho: LeakedEchoWatch
    /// Whether a talker the suppressor's detector does not hear is likely, in a room that rings past the filter.
    private var unheardTalker: UnheardTalkerWatch
    /// The misadjustment monitor as a restarted filter gets it: the aligned reference's lead over the echo
    /// (`EchoAligner.defaultLeadMilliseconds`) in blocks, the blocks of 10 ms it judges together.
    private let freshMisadjustment: MisadjustmentMonitor
    /// The DC notch the canceller's output carries (its own, narrowed below 12 kHz by `widener`).
    private var notch: DCNotch
    /// Pre-filters the microphone so the canceller's wide 8–11 kHz DC notch comes out as a narrow one; nil from 12 kHz.
    private var widener: NotchWidener?
    /// Turn the notch the canceller's output, its echo estimate and the declipped output carry (`notch`) into the
    /// voice's (`DCNotch.voiceRadius`, 3 dB down at 40 Hz), before the residual echo suppressor: the low echo the wider
    /// band lets through is the suppressor's to take (narrowed after it, to 20 Hz, that echo raised the output 8 dB over
    /// the background while the far end talked: pump scene m01).
    private var voiceNotch: NotchWidener
    private var estimateVoiceNotch: NotchWidener
    private var declippedVoiceNotch: NotchWidener
    private var tailEstimator: EchoTailEstimator
    /// The clock drift the aligner leaves, read from the filter's response sliding along its taps.
    private(set) var slide: EchoPathSlide
    /// Whether the echo starts before the filter's first tap, read from the filter's response (`EchoOnsetWatch`).
    private(set) var onset: EchoOnsetWatch
    private let impulseResponse: UnsafeMutableBufferPointer<Int32>
    private var blocksUntilTailUpdate = 0
    /// Whether the room rings past the filter (then grown: `growFilter`), and whether the far end played since the tail
    /// was last fitted.
    private var longRoom: LongRoomWatch
    /// Whether the filter was grown for the room (once).
    private var isFilterGrown = false
    /// Whether the far end played with no talker heard since the last fit of the tail (the filter learned at its step).
    private var isFarEndAloneSinceTailUpdate = false
    /// The filter's error and the microphone, summed over those blocks, and their ratio at the last fit that had any:
    /// what the filter leaves (`EchoTailEstimator`).
    private var farEndAloneErrorSum: Float = 0, farEndAloneMicrophoneSum: Float = 0
    private var filterLeftoverShare: Float?
    /// How often the late tail is refitted to the filter's impulse response (an inverse FFT per filter block).
    private static var tailUpdateSeconds: Double { 0.5 }
    /// The late tail's decay per block and tap energy past the filter (see `EchoTailEstimator`).
    public var lateTailDecayPerBlock: Float { tailEstimator.decayPerBlock }
    public var lateTailEnergy: Float { tailEstimator.energyPastEnd }
    private var isAGCRequested = false
    /// Blocks since the reference last carried the far end (saturating).
    private var blocksSinceFarEnd = Int.max / 2
    /// Blocks after the far end falls silent that still count as echo for gain control: the echo tail the
    /// filter covers.
    private let echoTailBlockCount: Int

    /// The linear filter's own echo return loss enhancement (microphone over filter output), counted on the
    /// blocks in which the far end played: an observer differences its spans over any stretch it likes.
    public let linearERLE: ERLEMeter
    /// Power the residual echo suppressor removed from the last block, in dB (0 = untouched, negative).
    public var suppressionDB: Float { suppressor.suppressionDecibels }
    /// Whether the near talker spoke over the far end in the last block.
    public var isDoubleTalk: Bool { suppressor.detector.doubleTalk }
    /// The canceller's output power over the microphone's in the last block: near 1 when the microphone holds
    /// sound the echo path does not explain (a near talker), near the echo reduction when it holds echo alone.
    public private(set) var unexplainedPowerRatio: Float = 1
    /// Whether the last block had a near talker that echo cannot pass for: the residual echo suppressor's detector
    /// hears the near end and, while the far end plays or its echo tail rings, the canceller's output, smoothed
    /// over about 100 ms, is within 3 dB of the microphone's. Music cancelled by 20 dB on average dips to 6 dB for
    /// a block or two and its leftovers fool the detector, but they do not hold half the microphone's power for
    /// 100 ms; a talker as loud as the echo does. A block's output counts at most at the microphone's power: more
    /// is the filter's own pre-echo at a music onset (up to 20 dB above the microphone for two blocks), which
    /// alone would hold the average up. Gain control and muted-speech detection use it.
    public private(set) var isNearTalkerConfirmed = false
    /// Smoothed canceller output and microphone powers behind `isNearTalkerConfirmed`.
    private var smoothedErrorPower: Float = 0
    private var smoothedMicrophonePower: Float = 0
    /// Smoothed canceller output over microphone power above which the microphone holds more than echo (−3 dB).
    static let nearTalkerMinimumUnexplainedRatio: Float = 0.5
    /// Smoothed canceller output over microphone power above which a talker the detector hears slows the filter (−10 dB).
    private static var pullingTalkerMinimumUnexplainedRatio: Float { 0.1 }
    /// Weight of a block in the smoothed powers (a time constant of about 10 blocks).
    private static var unexplainedSmoothing: Float { 0.1 }
    /// Whether the linear filter found no echo to cancel: it took 3 dB or less off the microphone over the last 3 s of
    /// far-end sound without a near talker (`EchoPresence`). A headset's microphone, which hears none of the
    /// loudspeaker, gives it; so does an echo the filter cannot follow yet (a microphone driven 15-20 dB over the
    /// reference converges slowly). ERLE then comes from suppression alone, and the filter subtracts nothing: its
    /// estimate only informs the suppressor, weighed by how much of the microphone it explains. Real-time safe.
    public var isNoEchoFound: Bool { echoPresence.isTakingLittleOff }
    /// Whether the residual echo suppressor's detector hears the near end (output above what echo and noise
    /// explain) in the last block.
    public var isNearEndActive: Bool { suppressor.detector.nearEndActive }
    /// The level at which the loudspeaker was found to saturate, as a fraction of full scale; nil while it is taken
    /// for linear (`EchoCanceller.loudspeakerKneeLevel`). Real-time safe.
    public var loudspeakerKneeLevel: Float? { canceller.loudspeakerKneeLevel }
    /// The echo tail the linear filter covers now, in milliseconds: `settings.filterLengthMilliseconds`, or longer once
    /// the room was found to ring past it (`LongRoomWatch`, `growFilter`); whole partitions of 10 ms.
    /// Real-time safe.
    public var echoFilterMilliseconds: Double { Double(canceller.filterLengthFrames) * 1000 / Double(sampleRate) }
    /// Times the linear filter was found misadjusted (its error correlated with its own echo estimate, as after
    /// an echo-path change) and started over.
    public private(set) var divergenceResetCount = 0
    /// Times the echo came back as the filter had it, only later or sooner (`EchoShiftFinder`), and the filter's path
    /// moved with it instead of starting over.
    public private(set) var pathShiftCount = 0
    private let shiftFinder: EchoShiftFinder
    /// Whether the filter started over (`.sudden`) and the finder compares the previous path's estimate with the
    /// microphone until its window is full.
    private var isCheckingShift = false
    /// Blocks since the linear filter last started over (`forgetFilteredPath`: a divergence reset, a restart from its
    /// shadow, `reset`).
    private var blocksSinceFilterRestart = Int.max / 2
    /// How long the filter goes without starting over before the suppressor may hold the gentle gain past a talker
    /// (`ResidualEchoSuppressor.isFilterSettled`): a path that moved in double talk restarts the filter, and its
    /// leftover after the talker is echo. A settled filter at short blocks also takes a smaller step under a talker
    /// (`settledNearTalkerStepShare`).
    private static var settledFilterSeconds: Double { 2 }
    /// `settledFilterSeconds` in blocks.
    private let settledFilterBlocks: Int
    /// Whether the filter has gone `settledFilterSeconds` without starting over.
    private var isFilterSettled: Bool { blocksSinceFilterRestart > settledFilterBlocks }
    /// The share of its step the filter takes under a talker once settled (`settledShortBlockNearTalkerStepShare` at
    /// blocks shorter than 10 ms, `nearTalkerStepShare` otherwise).
    private let settledNearTalkerStepShare: Float
    /// Processing delay of the output behind the microphone, in frames: the suppressor's block, and one more
    /// block from speexdsp's preprocessor (its analysis window overlaps the previous frame).
    public var latencyFrames: Int { suppressor.latencyFrames + blockFrameCount }

    /// Not real-time safe (allocates the filter and scratch blocks).
    public init(sampleRate: Int, blockFrameCount: Int, settings: EchoPipelineSettings = .init()) throws(SpeexError) {
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
        linearERLE = ERLEMeter(windowSeconds: Double(blockFrameCount) / Double(sampleRate))
        self.settings = settings
        guard (0...1).contains(settings.nearTalkerStepShare) else {
            throw .invalidArgument("near-talker step share \(settings.nearTalkerStepShare) is outside 0–1")
        }
        guard (0...1).contains(settings.settledShortBlockNearTalkerStepShare) else {
            throw .invalidArgument(
                "settled short-block near-talker step share \(settings.settledShortBlockNearTalkerStepShare) is outside 0–1")
        }
        guard settings.longRoomFilterLengthMilliseconds.isFinite else {
            throw .invalidArgument("long-room echo filter length \(settings.longRoomFilterLengthMilliseconds) ms is not finite")
        }
        guard settings.reverberantRoomFilterLengthMilliseconds.isFinite else {
            throw .invalidArgument(
                "reverberant-room echo filter length \(settings.reverberantRoomFilterLengthMilliseconds) ms is not finite")
        }
        canceller = try EchoCanceller(frameCount: blockFrameCount,
                                      filterLengthMilliseconds: settings.filterLengthMilliseconds,
                                      longestFilterLengthMilliseconds: max(settings.filterLengthMilliseconds,
                                                                           settings.longRoomFilterLengthMilliseconds,
                                                                           settings.reverberantRoomFilterLengthMilliseconds),
                                      sampleRate: sampleRate)
        let applied = DCNotch(radius: DCNotch.speexRadius(sampleRate: sampleRate))
        notch = DCNotch(radius: DCNotch.outputRadius(sampleRate: sampleRate))
        clipDistortion = DCNotch(radius: notch.radius)
        widener = notch.radius == applied.radius ? nil : NotchWidener(applied: applied, wanted: notch)
        voiceNotch = NotchWidener(applied: notch, wanted: DCNotch(radius: DCNotch.voiceRadius(sampleRate: sampleRate)))
        estimateVoiceNotch = voiceNotch
        declippedVoiceNotch = voiceNotch
        impulseResponse = .allocate(capacity: canceller.longestFilterLengthFrames)
        impulseResponse.initialize(repeating: 0)
        tailEstimator = EchoTailEstimator(sampleRate: sampleRate, blockFrameCount: blockFrameCount)
        slide = EchoPathSlide(sampleRate: sampleRate, blockFrameCount: blockFrameCount)
        onset = EchoOnsetWatch(sampleRate: sampleRate)
        longRoom = LongRoomWatch(sampleRate: sampleRate, blockFrameCount: blockFrameCount)
        suppressor = ResidualEchoSuppressor(sampleRate: sampleRate, blockFrameCount: blockFrameCount,
                                            longestLateDelayBlocks: canceller.longestFilterLengthFrames / blockFrameCount)
        preprocessor = try Preprocessor(frameCount: blockFrameCount, sampleRate: sampleRate)
        preprocessor.isDenoiseEnabled = true
        preprocessor.noiseSuppressionDB = settings.isNoiseSuppressionEnabled ? settings.noiseSuppressionDB : 0
        preprocessor.agcTargetLevel = Int(32768 * pow(10, settings.agcTargetDBFS / 20))
        preprocessor.agcMaxGainDB = settings.agcMaxGainDB
        preprocessor.isAGCEnabled = false
        let leadFrames = EchoAligner.defaultLeadMilliseconds * Double(sampleRate) / 1000
        let blockRate = BlockRate(blocksPerSecond: Double(sampleRate) / Double(blockFrameCount))
        freshMisadjustment = MisadjustmentMonitor(leadBlocks: Int((leadFrames / Double(blockFrameCount)).rounded(.up)),
                                                  blocksPerJudgedBlock: blockRate.blocksPerTunedBlock)
        misadjustment = freshMisadjustment
        echoPresence = EchoPresence(rate: blockRate)
        explained = ExplainedShare(rate: blockRate)
        leakedEcho = LeakedEchoWatch(rate: blockRate)
        shiftFinder = EchoShiftFinder(sampleRate: sampleRate)
        unheardTalker = UnheardTalkerWatch(rate: blockRate)
        settledFilterBlocks = blockRate.blocks(seconds: Self.settledFilterSeconds)
        settledNearTalkerStepShare = blockRate.blocksPerTunedBlock > 1 ? settings.settledShortBlockNearTalkerStepShare
            : settings.nearTalkerStepShare
        echoTailBlockCount = Int((settings.filterLengthMilliseconds * Double(sampleRate) / 1000 / Double(blockFrameCount)).rounded(.up))
        microphone = .allocate(capacity: blockFrameCount)
        reference = .allocate(capacity: blockFrameCount)
        cancelled = .allocate(capacity: blockFrameCount)
        for block in [microphone, reference, cancelled] { block.initialize(repeating: 0) }
        error = .allocate(capacity: blockFrameCount)
        echoEstimate = .allocate(capacity: blockFrameCount)
        declipped = .allocate(capacity: blockFrameCount)
        for block in [error, echoEstimate, declipped] { block.initialize(repeating: 0) }
    }

    deinit {
        for block in [microphone, reference, cancelled] { block.deallocate() }
        for block in [error, echoEstimate, declipped] { block.deallocate() }
        impulseResponse.deallocate()
    }

    /// Whether gain control runs from the next block. While the far end plays (and for the echo tail after it)
    /// and the near end is silent, it is frozen: what is left then is residual echo and comfort noise, which its
    /// gain, learned on a quiet near talker, would lift by as much. Real-time safe; set it on the processing
    /// thread.
    public var isAGCEnabled: Bool {
        get { isAGCRequested }
        set { isAGCRequested = newValue }
    }

    /// Whether the reference is aligned with the echo: false while its delay is not yet known, and the residual
    /// echo suppressor takes the far end's sound of the last half second for echo
    /// (`ResidualEchoSuppressor.isReferenceAligned`). Real-time safe; set it on the processing thread.
    public var isReferenceAligned: Bool {
        get { suppressor.isReferenceAligned }
        set { suppressor.isReferenceAligned = newValue }
    }

    /// The gain the gain control applied to the last block, in dB (0 while it is off or frozen). Real-time safe.
    public var agcGainDB: Int { preprocessor.isAGCEnabled ? preprocessor.agcGainDB : 0 }

    /// Real-time safe.
    public func process(microphone input: UnsafeBufferPointer<Float>, reference echo: UnsafeBufferPointer<Float>,
                        output: UnsafeMutableBufferPointer<Float>) -> Bool {
        guard input.count >= blockFrameCount, echo.count >= blockFrameCount, output.count >= blockFrameCount,
              let microphoneBase = microphone.baseAddress, let referenceBase = reference.baseAddress,
              let cancelledBase = cancelled.baseAddress else { return false }
        if widener == nil {
            SampleConversion.int16(from: input, into: microphone)
        } else {
            for index in 0..<blockFrameCount {
                let widened = widener?.filter(input[index] * 32768) ?? 0
                microphone[index] = Int16(min(max(widened.rounded(), -32768), 32767))
            }
        }
        SampleConversion.int16(from: echo, into: reference)
        var microphonePower: Float = 0, referencePower: Float = 0
        for index in 0..<blockFrameCount {
            microphonePower += input[index] * input[index]
            referencePower += echo[index] * echo[index]
        }
        let farEndActive = referencePower > ResidualEchoSuppressor.farEndMeanSquare * Float(blockFrameCount)
        // The far end plays alone for the linear filter's learning rate once the suppressor's near talker has been
        // quiet as long as its ratios wait before learning upward (with the detector's 80 ms hangover instead, the
        // hall scene's near talker lost 0.5 dB in double talk).
        canceller.isFarEndAlone = suppressor.isNearEndQuiet
        // The talker the suppressor's detector heard in the last block pulls the filter, unless the filter itself
        // found that block leaked echo (a path that moved under the talker, to be learned at the full step). The
        // detector takes leftovers of sustained music for a talker too: only output within 10 dB of the microphone over
        // the last 100 ms counts (music-echo live: 49.8 dB with it, 37.2 without; a talker 5 dB under the echo is
        // within 7 dB). A filter that found no echo subtracts nothing and keeps its whole step: slowed, the headset's
        // voiced talker near the far end's pitch (`HeadsetTests`) lost 6-18 dB per 3 s instead of 2-4.
        canceller.isNearTalkerHeard = suppressor.detector.nearEndActive && !leakedEcho.isLeakedBlock && !isNoEchoFound
            && smoothedErrorPower > Self.pullingTalkerMinimumUnexplainedRatio * smoothedMicrophonePower
        canceller.isTalkerHeardLong = leakedEcho.isTalkerHeardLong
        canceller.nearTalkerStepShare = isFilterSettled ? settledNearTalkerStepShare : settings.nearTalkerStepShare
        var (errorPower, filteredMicrophonePower) = cancel(input, microphone: microphoneBase, reference: referenceBase,
                                                            output: cancelledBase)
        if isCheckingShift { checkShift() }
        if canceller.restartedFromShadow {
            // The path changed under the filter, which took its shadow's weights: what the suppressor took for a
            // near talker since then was the new echo. Its ratios to the reference stay under a talker heard for a
            // second (see `reset`). Unless the path moved under such a talker (`TalkerPathMove`), who is still one:
            // the suppressor then keeps its near end too (forgetting it, when the takeover asked only that the shadow
            // beat the foreground, cost our dt-change t01 0.07 in double talk's STOI, t03 0.05). But not its hangover
            // when the blocks up to the takeover were suppressed as the filter's error (a path that moved in a far-end
            // pause, found at the far end's return): the talker it holds was last heard before them, maybe the moved
            // echo's first blocks, and the gentle gain of double talk let that echo through until it ran out
            // (`DoubleTalkPathChangeTests`: 21-24 dB over the second after the return, 33-48 so; our late-dt-change
            // u05's ERLE 27.1 -> 29.2 dB). Ended at every takeover under a talker, the hangover of one who talks on
            // mattered: dt-change t09's talker lost 2.5 dB over the half second after the takeover.
            divergenceResetCount += 1
            forgetFilteredPath(keepingReferenceCoupling: leakedEcho.isTalkerHeardLong)
            if !canceller.restartedUnderTalker {
                suppressor.forgetNearEnd()
            } else if suppressor.wasOutputFilterError {
                suppressor.endNearEndHangover()
            }
        }
        // A talker pulls the filter as a moved path does when heard for a second, and in a room that rings past the
        // filter (grown) as soon as heard: a grown filter leaves the "before" of a talker's pause above 8 dB, and a
        // word after it passed the sudden verdict's tests (our reverberant r07, grown to 289 ms: the suppressor started
        // over 3.6 s into the double talk, the talker −2.7 dB and DT STOI 0.84; −0.7 dB and 0.93 so).
        let nearTalker: MisadjustmentMonitor.NearTalker = leakedEcho.isTalkerHeardLong ? .heardLong
            : isFilterGrown && suppressor.detector.nearEndActive ? .pullingLately
            : suppressor.isNearEndQuiet ? .quiet : .heard
        switch misadjustment.observe(error: UnsafeBufferPointer(error), estimate: UnsafeBufferPointer(echoEstimate),
                                     microphonePower: microphonePower, referencePower: referencePower,
                                     farEndActive: farEndActive, nearTalker: nearTalker) {
        case .sudden:
            // The path moved under a filter that was cancelling well, a few blocks ago: what the suppressor's
            // detector took for a near talker since then was the new echo. The block that gave the change away
            // goes through the fresh filter too, so the suppressor, back at its pessimistic start, takes it for echo.
            // The path the filter had is kept a while, in case the echo came back whole, only later or sooner
            // (`checkShift`).
            divergenceResetCount += 1
            reset(keepingPreviousPath: true)
            suppressor.forgetNearEnd()
            (errorPower, filteredMicrophonePower) = cancel(input, microphone: microphoneBase, reference: referenceBase,
                                                           output: cancelledBase)
            isCheckingShift = true
            checkShift()
        case .sustained:
            divergenceResetCount += 1
            reset()
        case nil:
            // Waiting to tell a moved path from a pre-echo: this block's output is the filter's error, not a talker.
            // Within sustained far-end sound (music) the suppressor starts over from its pessimistic coupling, which
            // also keeps the pre-echoes of the onsets that follow down (held music: 45 dB, 21 dB without).
            if misadjustment.isSuddenPending && !misadjustment.isFarEndReturning {
                suppressor.forgetEchoCoupling()
                suppressor.forgetNearEnd()
            }
        }
        let wasNoEchoFound = isNoEchoFound
        // A clipped block says nothing of whether there is echo: no linear filter takes its distortion off. Counted, a
        // microphone 18 dB hot and clipping on every echo peak (our hot-microphone g08) passed for one without echo.
        if farEndActive && !suppressor.detector.nearEndActive && !canceller.isMicrophoneClipped {
            echoPresence.add(errorPower: errorPower, microphonePower: filteredMicrophonePower)
        }
        explained.add(errorPower: errorPower, microphonePower: filteredMicrophonePower)
        let isEchoTurningUp = canceller.isShadowCancelling || (farEndActive && explained.isHalfExplained)
            || (wasNoEchoFound && !isNoEchoFound)
        if isEchoTurningUp {
            // There is echo after all (a headset unplugged, a loudspeaker turned up from silence): the verdict goes,
            // and its average starts over, so that the new echo's blocks the filter has not learned yet cannot swing
            // it back. The filter's own 3 dB over 100 ms of far end gives the echo away sooner than the shadow's 6 dB
            // (3.4 s after the loudspeaker in our 8 kHz scene); a talker who pulls the filter stays under that (0.2 at
            // most in the headset scenes). What the suppressor kept from a microphone without echo, its ratios to the
            // reference, would take the new echo for a talker (and a detector that hears a talker slows the filter):
            // it starts over from its pessimistic start.
            if wasNoEchoFound { suppressor.forgetEchoCoupling() }
            echoPresence.restart()
        }
        // At the far end's return after a pause the pre-echo is suppressed, and what the suppressor learned of the
        // room stays: a talker who starts with the far end was taken for echo for a second or more (the public pump
        // scene m01: 2.2 dB lost in double talk, 0.9 now). A path that moved in the pause is still reset (.sudden).
        // So is the output while the shadow leads a filter that lost the path, before it takes over (6 dB for 5
        // blocks): its lead is echo, which no talker gives it, and the detector took that echo for a talker (our
        // late-dt-change u06, its path moved under a talker who stopped as the far end came back: ERLE 30.1 -> 38.4 dB).
        // Not under a talker heard for a second, whom both errors hold: a path that moves then is `TalkerPathMove`'s to
        // find, from the talker the detector hears (`DoubleTalkPathChangeTests`: 5.7-8.2 dB after the talker, 16-25 so).
        suppressor.isOutputFilterError = (misadjustment.isSuddenPending && misadjustment.isFarEndReturning)
            || (canceller.isShadowLeading && !leakedEcho.isTalkerHeardLong)
        unexplainedPowerRatio = errorPower / max(microphonePower, 1e-12)
        slide.observe(canceller, farEndActive: farEndActive, isTalkerHeard: suppressor.detector.nearEndActive,
                      microphonePower: filteredMicrophonePower, errorPower: errorPower)
        onset.add(microphonePower: filteredMicrophonePower, errorPower: errorPower,
                  isFarEndAlone: farEndActive && !suppressor.detector.nearEndActive)
        let blockFrames = Float(blockFrameCount)
        linearERLE.add(microphoneMeanSquare: microphonePower / blockFrames, processedMeanSquare: errorPower / blockFrames,
                       gate: farEndActive ? .echo : .quietReference, bypassed: false)
        if blocksUntilTailUpdate <= 0 {
            blocksUntilTailUpdate = Int(Self.tailUpdateSeconds * Double(sampleRate)) / blockFrameCount
            let taps = UnsafeMutableBufferPointer(rebasing: impulseResponse[..<canceller.impulseResponseFrameCount])
            canceller.impulseResponse(into: taps)
            if isFarEndAloneSinceTailUpdate {
                filterLeftoverShare = farEndAloneErrorSum / max(farEndAloneMicrophoneSum, 1e-12)
            }
            tailEstimator.update(taps: UnsafeBufferPointer(taps), scale: canceller.impulseResponseScale,
                                 filterLeftoverShare: filterLeftoverShare)
            farEndAloneErrorSum = 0
            farEndAloneMicrophoneSum = 0
            onset.observe(taps: UnsafeBufferPointer(taps), isEchoFound: !isNoEchoFound)
            suppressor.setLateTail(energyPastEnd: tailEstimator.energyPastEnd, decayPerBlock: tailEstimator.decayPerBlock,
                                   delayBlocks: tailEstimator.tailStartBlocks)
            longRoom.observe(decayPerBlock: tailEstimator.fittedDecayPerBlock, tailShare: tailEstimator.fittedTailShare,
                             isFarEndHeardAlone: isFarEndAloneSinceTailUpdate)
            isFarEndAloneSinceTailUpdate = false
            if longRoom.roomOutlastsFilter && !isFilterGrown { growFilter() }
        }
        blocksUntilTailUpdate -= 1
        if farEndActive && !suppressor.detector.nearEndActive {
            isFarEndAloneSinceTailUpdate = true
            farEndAloneErrorSum += errorPower
            farEndAloneMicrophoneSum += microphonePower
        }
        let estimateEchoShare = isNoEchoFound ? explained.share : 1
        if isNoEchoFound {
            // A filter that found no echo subtracts nothing: what it would take off is the near talker it was pulled
            // to (a headset's, whose voice near the far end's pitch the reference's harmonics partly predict). Its
            // estimate reaches the suppressor as far as it explains the microphone: little of a talker it cannot
            // follow, more and more of an echo that turns up after all, which the suppressor's ratios to it catch.
            let weight = estimateEchoShare.squareRoot()  // the estimate's power times the share explained
            for index in 0..<blockFrameCount {
                error[index] += echoEstimate[index]
                echoEstimate[index] *= weight
            }
        }
        suppressor.isOutputLeakedEcho = leakedEcho.observe(leakedEchoToErrorRatio: canceller.leakedEchoToErrorRatio,
                                                           farEndActive: farEndActive,
                                                           isNearEndQuiet: suppressor.isNearEndQuiet)
        suppressor.filterFindsLeakedEcho = leakedEcho.isLeakedBlock
        suppressor.filterFindsClearlyLeakedEcho = leakedEcho.isClearlyLeakedBlock
        suppressor.estimateEchoShare = estimateEchoShare
        suppressor.isMicrophoneClipped = canceller.isMicrophoneClipped
        suppressor.isFilterSettled = isFilterSettled
        suppressor.isUnheardTalkerLikely = unheardTalker.observe(
            outputShare: smoothedErrorPower / max(smoothedMicrophonePower, 1e-12),
            leakedEchoToErrorRatio: canceller.leakedEchoToErrorRatio,
            isFarEndAlone: farEndActive && suppressor.isNearEndQuiet && smoothedMicrophonePower > 0,
            isNearEndQuiet: suppressor.isNearEndQuiet, leftoverExplainedShare: suppressor.leftoverExplainedShare,
            isRoomRingingLong: isFilterGrown)
        blocksSinceFilterRestart = min(blocksSinceFilterRestart + 1, Int.max / 2)
        for index in 0..<blockFrameCount {
            error[index] = voiceNotch.filter(error[index])
            echoEstimate[index] = estimateVoiceNotch.filter(echoEstimate[index])
            declipped[index] = declippedVoiceNotch.filter(declipped[index])
        }
        suppressor.process(output: error, echoEstimate: UnsafeBufferPointer(echoEstimate),
                           reference: UnsafeBufferPointer(rebasing: echo[..<blockFrameCount]),
                           declippedOutput: UnsafeBufferPointer(declipped))
        SampleConversion.int16(from: UnsafeBufferPointer(error), into: cancelled)
        blocksSinceFarEnd = farEndActive ? 0 : min(blocksSinceFarEnd + 1, Int.max / 2)
        // Output beyond the microphone's power is the filter's own (a pre-echo at a music onset), not the room's.
        smoothedErrorPower += Self.unexplainedSmoothing * (min(errorPower, microphonePower) - smoothedErrorPower)
        smoothedMicrophonePower += Self.unexplainedSmoothing * (microphonePower - smoothedMicrophonePower)
        let echoRinging = blocksSinceFarEnd <= echoTailBlockCount
        isNearTalkerConfirmed = suppressor.detector.nearEndActive && (!echoRinging
            || smoothedErrorPower > Self.nearTalkerMinimumUnexplainedRatio * max(smoothedMicrophonePower, 1e-12))
        let agc = isAGCRequested && (!echoRinging || isNearTalkerConfirmed)
        if agc != preprocessor.isAGCEnabled { preprocessor.isAGCEnabled = agc }
        preprocessor.process(cancelledBase)
        SampleConversion.float(from: UnsafeBufferPointer(cancelled), into: output)
        return LevelMeter.measure(UnsafeBufferPointer(cancelled)).rmsDBFS > Self.voiceActivityThresholdDBFS
    }

    /// Runs the linear filter over one block: fills `error` (its output), `echoEstimate` (the notched microphone minus
    /// it) and `declipped`, and returns the error's power and the notched microphone's (the microphone the filter saw),
    /// each summed over the block. A clipped sample whose echo estimate explains the clipping leaves its output as
    /// distortion, which the notch then carries into the samples after it (`clipDistortion`); `declipped` is the output
    /// without either. Real-time safe.
    private func cancel(_ input: UnsafeBufferPointer<Float>, microphone: UnsafePointer<Int16>,
                        reference: UnsafePointer<Int16>, output: UnsafeMutablePointer<Int16>)
        -> (error: Float, filteredMicrophone: Float) {
        canceller.process(microphone: microphone, reference: reference, output: output)
        var errorPower: Float = 0, filteredMicrophonePower: Float = 0
        let explainingEcho = Self.clippedEchoMinimumShare * Float(BlockAdaptiveFilter.clippedMagnitude) / 32768
        for index in 0..<blockFrameCount {
            let e = Float(cancelled[index]) / 32768
            let notched = notch.filter((input[index] * 32768).rounded()) / 32768
            error[index] = e
            echoEstimate[index] = notched - e
            let sample = microphone[index]
            let direction: Float = sample > 0 ? 1 : -1
            if BlockAdaptiveFilter.isClipped(sample) && echoEstimate[index] * direction >= explainingEcho {
                _ = clipDistortion.input(producing: e)
                declipped[index] = 0
            } else {
                declipped[index] = e - clipDistortion.filter(0)
            }
            errorPower += e * e
            filteredMicrophonePower += notched * notched
        }
        return (errorPower, filteredMicrophonePower)
    }

    /// Forgets the echo path (the linear filter and what the suppressor learned about its leftovers; what it learned
    /// against the reference stays, with a margin, when the filter had found no echo or a near talker is heard).
    /// Real-time safe.
    public func reset() { reset(keepingPreviousPath: false) }

    private func reset(keepingPreviousPath: Bool) {
        // A filter that found no echo and took next to nothing off left the whole echo to the suppressor, whose
        // ratios to the reference measured it: they are kept. A headset's talker, who pulled a filter that could
        // find no echo, was otherwise taken for echo from the pessimistic start on, and taught the ratios so.
        // They are kept while a talker is heard, too: a path that moves in double talk changes how the echo
        // relates to the filter's estimate, far less how loud it comes back from the reference; started over
        // pessimistic, they took a talker as loud as the echo for echo (our dt-change t05 and t06: the talker
        // -2.6 and -2.3 dB over the double talk, -1.7 and -1.5 dB kept; the echo in the first half second after
        // the double talk 14 and 50 dB, 10 and 27 dB kept). Only under a talker heard for a second, though
        // (`LeakedEchoWatch.isTalkerHeardLong`): a path that moves in far-end single talk into a louder echo is heard
        // as a talker from the move on, and the ratios it kept then let that echo through until the new filter had
        // learned it (our `changes` scene c03, the path moved and 6 dB louder: 20 dB 1.5 s after the change, 1.0 s
        // now).
        let keepsReferenceCoupling = isNoEchoFound || leakedEcho.isTalkerHeardLong
        if keepingPreviousPath { canceller.resetKeepingPreviousPath() } else { canceller.reset() }
        notch.reset()
        clipDistortion.reset()
        forgetFilteredPath(keepingReferenceCoupling: keepsReferenceCoupling)
    }

    /// Gives the finder the previous path's estimate of this block; once its window is full, takes the previous path
    /// back, moved, if the echo came back as it had it, only later or sooner. What was learned of the restarted
    /// filter's leftovers goes with it. Real-time safe.
    private func checkShift() {
        shiftFinder.add(estimate: canceller.previousPathEstimate(), microphone: canceller.filteredMicrophone)
        guard shiftFinder.isFull else { return }
        let frames = shiftFinder.findShift()
        isCheckingShift = false
        guard let frames else { return }
        pathShiftCount += 1
        canceller.adoptPreviousPath(shiftedBy: frames)
        forgetFilteredPath(keepingReferenceCoupling: true)
    }

    /// Grows the filter for a room found to ring past it (`LongRoomWatch`): to half its reverberation time, at least the
    /// settings' long-room length and at most their reverberant-room one. Grown past the long-room length while the far
    /// end plays alone, the filter leaves a leftover of another shape than the one the suppressor learned (the late tail
    /// it modelled past the old end now falls inside the filter, whose new taps start from zero), and the suppressor's
    /// ratios start over from their pessimistic start: kept, the leftover passed for a talker in far-end single talk for
    /// seconds (our reverberant r02: ERLE 32.6 dB, 38.6 so). Real-time safe.
    private func growFilter() {
        isFilterGrown = true
        suppressor.isRoomRingingLong = true
        let longRoomMilliseconds = settings.longRoomFilterLengthMilliseconds
        var milliseconds = longRoomMilliseconds
        if let seconds = longRoom.reverberationSeconds {
            milliseconds = max(milliseconds, min(settings.reverberantRoomFilterLengthMilliseconds, seconds * 1000 / 2))
        }
        // Until the new taps learn the room, the echo past the old end stays the late tail's: taken for none at the
        // growth, in a far loudspeaker's hall (our far-speaker f11, 0.77 s) it passed for a talker in the next half
        // second and came out 12 dB under the microphone (ERLE 43.2 dB at 10 ms blocks and 33.6 at 5 ms, against 45.5
        // and 38.7 so).
        tailEstimator.filterGrew(fromBlocks: canceller.impulseResponseFrameCount / blockFrameCount)
        canceller.extendFilter(toFrames: Int(milliseconds * Double(sampleRate) / 1000))
        if milliseconds > longRoomMilliseconds && suppressor.isNearEndQuiet { suppressor.forgetEchoCoupling() }
    }

    /// Forgets what was learned of the linear filter's path (the suppressor's coupling to its leftovers, the
    /// misadjustment monitor's history), as when the filter starts over or takes its shadow's weights.
    /// Real-time safe.
    private func forgetFilteredPath(keepingReferenceCoupling: Bool = false) {
        suppressor.forgetLeftoverPath()
        tailEstimator.forgetGrowth()
        if keepingReferenceCoupling {
            // Kept for a talker heard long, the ratios to the reference measured the old filter's small leftover, not
            // the new one's whole echo, which the reference bounds for a while (`ResidualEchoSuppressor`).
            suppressor.forgetEstimateCoupling(boundingEchoByReference: !isNoEchoFound)
        } else {
            suppressor.forgetEchoCoupling()
        }
        misadjustment = freshMisadjustment
        shiftFinder.restart()
        isCheckingShift = false
        unheardTalker.restart(keepingNorm: keepingReferenceCoupling)
        slide.restart()
        onset.restart()
        blocksSinceFilterRestart = 0
    }
}
