import Glibc

/// How the voice-processing chain is tuned. Values are fixed when the chain is built.
public struct EchoPipelineSettings: Sendable, Hashable {
    /// The echo tail the adaptive filter covers after bulk-delay alignment, in milliseconds.
    public var filterLengthMilliseconds: Double = 200
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

/// The processing stage: speexdsp MDF echo cancellation → our per-bin residual echo suppression (with double-talk
/// detection and comfort noise) → speexdsp noise suppression → automatic gain control, on fixed blocks at the
/// voice rate.
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
    private var misadjustment = MisadjustmentMonitor()
    /// The DC notch the canceller's output carries (speexdsp's, narrowed below 12 kHz by `widener`).
    private var notch: DCNotch
    /// Pre-filters the microphone so speexdsp's wide 8–11 kHz DC notch comes out as a narrow one; nil from 12 kHz.
    private var widener: NotchWidener?
    private var tailEstimator: EchoTailEstimator
    private let impulseResponse: UnsafeMutableBufferPointer<Int32>
    private var blocksUntilTailUpdate = 0
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

    /// Energy of the microphone and of the linear filter's output summed over every block in which the far end
    /// played: running totals an observer differences over any span to get the filter's own ERLE.
    public private(set) var farEndMicrophoneEnergy: Double = 0
    public private(set) var farEndErrorEnergy: Double = 0
    /// Power the residual echo suppressor removed from the last block, in dB (0 = untouched, negative).
    public var suppressionDB: Float { suppressor.suppressionDecibels }
    /// Whether the near talker spoke over the far end in the last block.
    public var isDoubleTalk: Bool { suppressor.detector.doubleTalk }
    /// The canceller's output power over the microphone's in the last block: near 1 when the microphone holds
    /// sound the echo path does not explain (a near talker), near the echo reduction when it holds echo alone.
    public private(set) var unexplainedPowerRatio: Float = 1
    /// Whether the residual echo suppressor's detector hears the near end (output above what echo and noise
    /// explain) in the last block.
    public var isNearEndActive: Bool { suppressor.detector.nearEndActive }
    /// Times the linear filter was found misadjusted (its error correlated with its own echo estimate, as after
    /// an echo-path change) and started over.
    public private(set) var divergenceResetCount = 0
    /// Processing delay of the output behind the microphone, in frames: the suppressor's block, and one more
    /// block from speexdsp's preprocessor (its analysis window overlaps the previous frame).
    public var latencyFrames: Int { suppressor.latencyFrames + blockFrameCount }

    /// Not real-time safe (allocates the filter and scratch blocks).
    public init(sampleRate: Int, blockFrameCount: Int, settings: EchoPipelineSettings = .init()) throws(SpeexError) {
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
        self.settings = settings
        canceller = try EchoCanceller(frameCount: blockFrameCount,
                                      filterLengthMilliseconds: settings.filterLengthMilliseconds,
                                      sampleRate: sampleRate)
        let applied = DCNotch(radius: DCNotch.speexRadius(sampleRate: sampleRate))
        notch = DCNotch(radius: DCNotch.outputRadius(sampleRate: sampleRate))
        widener = notch.radius == applied.radius ? nil : NotchWidener(applied: applied, wanted: notch)
        impulseResponse = .allocate(capacity: canceller.impulseResponseFrameCount)
        impulseResponse.initialize(repeating: 0)
        tailEstimator = EchoTailEstimator(sampleRate: sampleRate, blockFrameCount: blockFrameCount)
        suppressor = ResidualEchoSuppressor(sampleRate: sampleRate, blockFrameCount: blockFrameCount,
                                            lateDelayBlocks: canceller.impulseResponseFrameCount / blockFrameCount)
        preprocessor = try Preprocessor(frameCount: blockFrameCount, sampleRate: sampleRate)
        preprocessor.isDenoiseEnabled = true
        preprocessor.noiseSuppressionDB = settings.isNoiseSuppressionEnabled ? settings.noiseSuppressionDB : 0
        preprocessor.agcTargetLevel = Int(32768 * pow(10, settings.agcTargetDBFS / 20))
        preprocessor.agcMaxGainDB = settings.agcMaxGainDB
        preprocessor.isAGCEnabled = false
        echoTailBlockCount = Int((settings.filterLengthMilliseconds * Double(sampleRate) / 1000 / Double(blockFrameCount)).rounded(.up))
        microphone = .allocate(capacity: blockFrameCount)
        reference = .allocate(capacity: blockFrameCount)
        cancelled = .allocate(capacity: blockFrameCount)
        for block in [microphone, reference, cancelled] { block.initialize(repeating: 0) }
        error = .allocate(capacity: blockFrameCount)
        echoEstimate = .allocate(capacity: blockFrameCount)
        for block in [error, echoEstimate] { block.initialize(repeating: 0) }
    }

    deinit {
        for block in [microphone, reference, cancelled] { block.deallocate() }
        for block in [error, echoEstimate] { block.deallocate() }
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
        canceller.process(microphone: microphoneBase, reference: referenceBase, output: cancelledBase)
        var microphonePower: Float = 0, errorPower: Float = 0, referencePower: Float = 0
        for index in 0..<blockFrameCount {
            let e = Float(cancelled[index]) / 32768
            error[index] = e
            echoEstimate[index] = notch.filter((input[index] * 32768).rounded()) / 32768 - e
            microphonePower += input[index] * input[index]
            errorPower += e * e
            referencePower += echo[index] * echo[index]
        }
        let farEndActive = referencePower > 1e-8 * Float(blockFrameCount)
        unexplainedPowerRatio = errorPower / max(microphonePower, 1e-12)
        if farEndActive {
            farEndMicrophoneEnergy += Double(microphonePower)
            farEndErrorEnergy += Double(errorPower)
        }
        if misadjustment.observe(error: UnsafeBufferPointer(error), estimate: UnsafeBufferPointer(echoEstimate),
                                 farEndActive: farEndActive) {
            divergenceResetCount += 1
            reset()
        }
        if blocksUntilTailUpdate <= 0 {
            blocksUntilTailUpdate = Int(Self.tailUpdateSeconds * Double(sampleRate)) / blockFrameCount
            canceller.impulseResponse(into: impulseResponse)
            tailEstimator.update(taps: UnsafeBufferPointer(impulseResponse), scale: canceller.impulseResponseScale)
            suppressor.setLateTail(energyPastEnd: tailEstimator.energyPastEnd, decayPerBlock: tailEstimator.decayPerBlock)
        }
        blocksUntilTailUpdate -= 1
        suppressor.process(output: error, echoEstimate: UnsafeBufferPointer(echoEstimate),
                           reference: UnsafeBufferPointer(rebasing: echo[..<blockFrameCount]))
        SampleConversion.int16(from: UnsafeBufferPointer(error), into: cancelled)
        blocksSinceFarEnd = farEndActive ? 0 : min(blocksSinceFarEnd + 1, Int.max / 2)
        let echoOnly = blocksSinceFarEnd <= echoTailBlockCount && !suppressor.detector.nearEndActive
        let agc = isAGCRequested && !echoOnly
        if agc != preprocessor.isAGCEnabled { preprocessor.isAGCEnabled = agc }
        preprocessor.process(cancelledBase)
        SampleConversion.float(from: UnsafeBufferPointer(cancelled), into: output)
        return LevelMeter.measure(UnsafeBufferPointer(cancelled)).rmsDBFS > Self.voiceActivityThresholdDBFS
    }

    /// Forgets the echo path (the linear filter and what the suppressor learned about its leftovers).
    /// Real-time safe.
    public func reset() {
        canceller.reset()
        notch.reset()
        suppressor.forgetEchoCoupling()
        misadjustment = MisadjustmentMonitor()
    }
}
