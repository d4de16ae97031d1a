import CSpeexDSP

/// speexdsp's preprocessor on mono Int16 blocks: noise suppression, automatic gain control and voice activity detection.
///
/// Owns one `SpeexPreprocessState`; use from one thread at a time. Property reads and writes are real-time safe
/// (except turning VAD on, see `isVADEnabled`) but must happen on the thread that calls `process`.
public final class Preprocessor {
    public let frameCount: Int
    public let sampleRate: Int
    private let state: OpaquePointer

    /// Not real-time safe (allocates).
    public init(frameCount: Int, sampleRate: Int) throws(SpeexError) {
        try SpeexError.validate(frameCount: frameCount, sampleRate: sampleRate)
        guard let state = speex_preprocess_state_init(Int32(frameCount), Int32(sampleRate)) else {
            throw .stateCreationFailed("preprocessor (\(frameCount) frames at \(sampleRate) Hz)")
        }
        self.state = state
        self.frameCount = frameCount
        self.sampleRate = sampleRate
    }

    deinit { speex_preprocess_state_destroy(state) }

    public var isDenoiseEnabled: Bool {
        get { integer(SPEEX_PREPROCESS_GET_DENOISE) != 0 }
        set { setInteger(SPEEX_PREPROCESS_SET_DENOISE, newValue ? 1 : 0) }
    }

    /// Maximum noise attenuation in dB (negative, e.g. -15).
    public var noiseSuppressionDB: Int {
        get { integer(SPEEX_PREPROCESS_GET_NOISE_SUPPRESS) }
        set { setInteger(SPEEX_PREPROCESS_SET_NOISE_SUPPRESS, newValue) }
    }

    /// Maximum residual echo attenuation in dB while only the far end talks (negative, e.g. -40).
    public var echoSuppressionDB: Int {
        get { integer(SPEEX_PREPROCESS_GET_ECHO_SUPPRESS) }
        set { setInteger(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS, newValue) }
    }

    /// Maximum residual echo attenuation in dB while the near end talks too (negative, e.g. -15).
    public var echoSuppressionActiveDB: Int {
        get { integer(SPEEX_PREPROCESS_GET_ECHO_SUPPRESS_ACTIVE) }
        set { setInteger(SPEEX_PREPROCESS_SET_ECHO_SUPPRESS_ACTIVE, newValue) }
    }

    public var isAGCEnabled: Bool {
        get { integer(SPEEX_PREPROCESS_GET_AGC) != 0 }
        set { setInteger(SPEEX_PREPROCESS_SET_AGC, newValue ? 1 : 0) }
    }

    /// The level AGC steers towards, in Int16 sample units (1…32768; speexdsp's default 8000, about -12 dBFS).
    public var agcTargetLevel: Int {
        get {
            var level: Float = 0
            speex_preprocess_ctl(state, SPEEX_PREPROCESS_GET_AGC_LEVEL, &level)
            return Int(level.rounded())
        }
        set {
            var level = Float(min(max(newValue, 1), 32768))
            speex_preprocess_ctl(state, SPEEX_PREPROCESS_SET_AGC_LEVEL, &level)
        }
    }

    /// The most gain AGC may apply, in dB.
    public var agcMaxGainDB: Int {
        get { integer(SPEEX_PREPROCESS_GET_AGC_MAX_GAIN) }
        set { setInteger(SPEEX_PREPROCESS_SET_AGC_MAX_GAIN, newValue) }
    }

    /// Voice activity detection. Not real-time safe to set: speexdsp prints a warning to stderr when it is
    /// turned on (its VAD is a heuristic on the speech probability), so set it before processing starts.
    public var isVADEnabled: Bool {
        get { integer(SPEEX_PREPROCESS_GET_VAD) != 0 }
        set { setInteger(SPEEX_PREPROCESS_SET_VAD, newValue ? 1 : 0) }
    }

    /// The gain AGC applies now, in dB.
    public var agcGainDB: Int { integer(SPEEX_PREPROCESS_GET_AGC_GAIN) }

    /// Processes `frameCount` frames in place and returns the voice activity decision (true: speech; always true
    /// while VAD is off). Real-time safe.
    @discardableResult
    public func process(_ frame: UnsafeMutablePointer<Int16>) -> Bool {
        speex_preprocess_run(state, frame) != 0
    }

    private func integer(_ request: Int32) -> Int {
        var value: Int32 = 0
        speex_preprocess_ctl(state, request, &value)
        return Int(value)
    }

    private func setInteger(_ request: Int32, _ value: Int) {
        var value = Int32(clamping: value)
        speex_preprocess_ctl(state, request, &value)
    }
}
