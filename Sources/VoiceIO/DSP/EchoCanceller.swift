import CSpeexDSP

/// An acoustic echo canceller: speexdsp's multidelay block frequency-domain adaptive filter (MDF), mono Int16.
///
/// Each block, it learns the path from the loudspeaker signal (the reference) to the microphone and subtracts the
/// echo it predicts. The reference must already be aligned with the microphone to within the filter length.
/// Owns one `SpeexEchoState`; use from one thread at a time.
public final class EchoCanceller {
    /// Frames per block, e.g. 10 ms (160 at 16 kHz). speexdsp suggests 10–20 ms.
    public let frameCount: Int
    public let sampleRate: Int
    /// The echo tail the filter covers, in frames (typically 100–500 ms of audio).
    public let filterLengthFrames: Int
    /// For `Preprocessor.link(echoCanceller:)` (residual echo suppression).
    let state: OpaquePointer

    /// Not real-time safe (allocates the filter). The sampling rate is always set explicitly: speexdsp assumes
    /// 8 kHz otherwise.
    public init(frameCount: Int, filterLengthMilliseconds: Double, sampleRate: Int) throws(SpeexError) {
        try SpeexError.validate(frameCount: frameCount, sampleRate: sampleRate)
        guard filterLengthMilliseconds.isFinite, filterLengthMilliseconds > 0, filterLengthMilliseconds <= 10_000 else {
            throw .invalidArgument("echo filter length \(filterLengthMilliseconds) ms is outside 0–10000 ms")
        }
        let filterLengthFrames = Int((filterLengthMilliseconds * Double(sampleRate) / 1000).rounded())
        guard filterLengthFrames >= frameCount else {
            throw .invalidArgument("echo filter length \(filterLengthFrames) frames is shorter than one block of \(frameCount) frames")
        }
        guard let state = speex_echo_state_init(Int32(frameCount), Int32(filterLengthFrames)) else {
            throw .stateCreationFailed("echo canceller (\(frameCount) frames, \(filterLengthFrames)-frame filter)")
        }
        var rate = Int32(sampleRate)
        speex_echo_ctl(state, SPEEX_ECHO_SET_SAMPLING_RATE, &rate)
        self.state = state
        self.frameCount = frameCount
        self.sampleRate = sampleRate
        self.filterLengthFrames = filterLengthFrames
    }

    deinit { speex_echo_state_destroy(state) }

    /// Cancels the echo in one block. Each pointer covers `frameCount` frames: the microphone, the reference
    /// (what the loudspeaker played, aligned), and the output, which may not alias the inputs. Real-time safe.
    public func process(microphone: UnsafePointer<Int16>, reference: UnsafePointer<Int16>,
                        output: UnsafeMutablePointer<Int16>) {
        speex_echo_cancellation(state, microphone, reference, output)
    }

    /// Taps `impulseResponse(into:)` writes: the filter length rounded up to whole blocks.
    public var impulseResponseFrameCount: Int {
        var size: Int32 = 0
        speex_echo_ctl(state, SPEEX_ECHO_GET_IMPULSE_RESPONSE_SIZE, &size)
        return Int(size)
    }

    /// What `impulseResponse(into:)`'s taps are multiplied by: 32767, and the window length (two blocks) since
    /// speexdsp's inverse FFT is unnormalised.
    public var impulseResponseScale: Float { 32767 * Float(2 * frameCount) }

    /// Writes the filter's current impulse response, `impulseResponseFrameCount` taps multiplied by
    /// `impulseResponseScale`, into `taps`. Costs one inverse FFT per filter block: call it at a low rate. Real-time safe.
    public func impulseResponse(into taps: UnsafeMutableBufferPointer<Int32>) {
        guard taps.count >= impulseResponseFrameCount, let base = taps.baseAddress else { return }
        speex_echo_ctl(state, SPEEX_ECHO_GET_IMPULSE_RESPONSE, base)
    }

    /// Forgets the learned echo path. Real-time safe.
    public func reset() { speex_echo_state_reset(state) }
}
