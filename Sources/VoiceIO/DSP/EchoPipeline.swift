import Glibc

/// How the voice-processing chain is tuned. Values are fixed when the chain is built.
public struct EchoPipelineSettings: Sendable, Hashable {
    /// The echo tail the adaptive filter covers after bulk-delay alignment, in milliseconds.
    public var filterLengthMilliseconds: Double = 200
    /// Whether stationary noise is attenuated. Residual echo suppression stays on either way.
    public var isNoiseSuppressionEnabled = true
    /// Maximum noise attenuation in dB (negative).
    public var noiseSuppressionDB = -15
    /// Maximum residual echo attenuation while only the far end talks, in dB (negative).
    public var echoSuppressionDB = -40
    /// Maximum residual echo attenuation during double talk, in dB (negative).
    public var echoSuppressionActiveDB = -15
    /// Level the gain control steers speech towards, in dBFS (RMS).
    public var agcTargetDBFS: Double = -18
    /// Most gain the gain control may add, in dB.
    public var agcMaxGainDB = 30

    public init() {}
}

/// The processing stage: speexdsp MDF echo cancellation → noise and residual-echo suppression → automatic gain
/// control, on fixed blocks at the voice rate.
///
/// The preprocessor always runs with its echo suppressor linked to the canceller; "no noise suppression" keeps it
/// running with a 0 dB noise floor, because speexdsp only applies its echo suppression gains while denoising is on.
/// Gain control can be switched per block (`isAGCEnabled`). Not thread safe: the real-time thread owns it.
public final class EchoPipeline: VoiceProcessor {
    public let blockFrameCount: Int
    public let sampleRate: Int
    public let settings: EchoPipelineSettings
    /// Processed RMS above which the near end counts as talking, in dBFS. (speexdsp's own VAD is a placeholder
    /// that warns on standard error when enabled, so the level after suppression decides.)
    public static let voiceActivityThresholdDBFS: Float = -40
    private let canceller: EchoCanceller
    private let preprocessor: Preprocessor
    private let microphone: UnsafeMutableBufferPointer<Int16>
    private let reference: UnsafeMutableBufferPointer<Int16>
    private let cancelled: UnsafeMutableBufferPointer<Int16>

    /// Not real-time safe (allocates the filter and scratch blocks).
    public init(sampleRate: Int, blockFrameCount: Int, settings: EchoPipelineSettings = .init()) throws(SpeexError) {
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
        self.settings = settings
        canceller = try EchoCanceller(frameCount: blockFrameCount,
                                      filterLengthMilliseconds: settings.filterLengthMilliseconds,
                                      sampleRate: sampleRate)
        preprocessor = try Preprocessor(frameCount: blockFrameCount, sampleRate: sampleRate)
        preprocessor.link(echoCanceller: canceller)
        preprocessor.isDenoiseEnabled = true
        preprocessor.noiseSuppressionDB = settings.isNoiseSuppressionEnabled ? settings.noiseSuppressionDB : 0
        preprocessor.echoSuppressionDB = settings.echoSuppressionDB
        preprocessor.echoSuppressionActiveDB = settings.echoSuppressionActiveDB
        preprocessor.agcTargetLevel = Int(32768 * pow(10, settings.agcTargetDBFS / 20))
        preprocessor.agcMaxGainDB = settings.agcMaxGainDB
        preprocessor.isAGCEnabled = false
        microphone = .allocate(capacity: blockFrameCount)
        reference = .allocate(capacity: blockFrameCount)
        cancelled = .allocate(capacity: blockFrameCount)
        for block in [microphone, reference, cancelled] { block.initialize(repeating: 0) }
    }

    deinit {
        microphone.deallocate()
        reference.deallocate()
        cancelled.deallocate()
    }

    /// Whether gain control runs on the next block. Real-time safe; set it on the processing thread.
    public var isAGCEnabled: Bool {
        get { preprocessor.isAGCEnabled }
        set { if newValue != preprocessor.isAGCEnabled { preprocessor.isAGCEnabled = newValue } }
    }

    /// The gain the gain control applies now, in dB (0 while it is off). Real-time safe.
    public var agcGainDB: Int { preprocessor.isAGCEnabled ? preprocessor.agcGainDB : 0 }

    /// Real-time safe.
    public func process(microphone input: UnsafeBufferPointer<Float>, reference echo: UnsafeBufferPointer<Float>,
                        output: UnsafeMutableBufferPointer<Float>) -> Bool {
        guard input.count >= blockFrameCount, echo.count >= blockFrameCount, output.count >= blockFrameCount,
              let microphoneBase = microphone.baseAddress, let referenceBase = reference.baseAddress,
              let cancelledBase = cancelled.baseAddress else { return false }
        SampleConversion.int16(from: input, into: microphone)
        SampleConversion.int16(from: echo, into: reference)
        canceller.process(microphone: microphoneBase, reference: referenceBase, output: cancelledBase)
        preprocessor.process(cancelledBase)
        SampleConversion.float(from: UnsafeBufferPointer(cancelled), into: output)
        return LevelMeter.measure(UnsafeBufferPointer(cancelled)).rmsDBFS > Self.voiceActivityThresholdDBFS
    }

    /// Forgets the echo path and the noise estimate. Real-time safe.
    public func reset() { canceller.reset() }
}
