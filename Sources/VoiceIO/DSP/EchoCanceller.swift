/// An acoustic echo canceller: our multidelay block frequency-domain adaptive filter (`BlockAdaptiveFilter`),
/// mono Int16.
///
/// Each block, it learns the path from the loudspeaker signal (the reference) to the microphone and subtracts the
/// echo it predicts. The reference must already be aligned with the microphone to within the filter length.
/// Use from one thread at a time.
public final class EchoCanceller {
    /// Frames per block, e.g. 10 ms (160 at 16 kHz).
    public let frameCount: Int
    public let sampleRate: Int
    /// The echo tail the filter covers, in frames (typically 100–500 ms of audio).
    public let filterLengthFrames: Int
    private let filter: BlockAdaptiveFilter
    private let taps: UnsafeMutablePointer<Float>

    /// Not real-time safe (allocates the filter).
    public init(frameCount: Int, filterLengthMilliseconds: Double, sampleRate: Int) throws(SpeexError) {
        try SpeexError.validate(frameCount: frameCount, sampleRate: sampleRate)
        guard filterLengthMilliseconds.isFinite, filterLengthMilliseconds > 0, filterLengthMilliseconds <= 10_000 else {
            throw .invalidArgument("echo filter length \(filterLengthMilliseconds) ms is outside 0–10000 ms")
        }
        let filterLengthFrames = Int((filterLengthMilliseconds * Double(sampleRate) / 1000).rounded())
        guard filterLengthFrames >= frameCount else {
            throw .invalidArgument("echo filter length \(filterLengthFrames) frames is shorter than one block of \(frameCount) frames")
        }
        filter = BlockAdaptiveFilter(frameCount: frameCount, filterLengthFrames: filterLengthFrames, sampleRate: sampleRate)
        taps = .allocate(capacity: filter.partitionCount * frameCount)
        taps.initialize(repeating: 0, count: filter.partitionCount * frameCount)
        self.frameCount = frameCount
        self.sampleRate = sampleRate
        self.filterLengthFrames = filterLengthFrames
    }

    deinit { taps.deallocate() }

    /// Cancels the echo in one block. Each pointer covers `frameCount` frames: the microphone, the reference
    /// (what the loudspeaker played, aligned), and the output, which may not alias the inputs. Real-time safe.
    public func process(microphone: UnsafePointer<Int16>, reference: UnsafePointer<Int16>,
                        output: UnsafeMutablePointer<Int16>) {
        filter.process(microphone: microphone, reference: reference, output: output)
    }

    /// Taps `impulseResponse(into:)` writes: the filter length rounded up to whole blocks.
    public var impulseResponseFrameCount: Int { filter.partitionCount * frameCount }

    /// What `impulseResponse(into:)`'s taps are multiplied by: 32767 times two blocks (the scale speexdsp's
    /// canceller used, kept for `EchoTailEstimator`).
    public var impulseResponseScale: Float { 32767 * Float(2 * frameCount) }

    /// Writes the filter's current impulse response, `impulseResponseFrameCount` taps multiplied by
    /// `impulseResponseScale`, into `taps`. Costs one inverse FFT per filter block: call it at a low rate. Real-time safe.
    public func impulseResponse(into output: UnsafeMutableBufferPointer<Int32>) {
        guard output.count >= impulseResponseFrameCount else { return }
        filter.impulseResponse(into: taps)
        let scale = impulseResponseScale
        for i in 0..<impulseResponseFrameCount {
            output[i] = Int32(max(-2.1e9, min(2.1e9, (taps[i] * scale).rounded())))
        }
    }

    /// Whether the far end plays alone for sure (no near talker for a while): the filter then keeps learning at
    /// least at its start-up rate, which sustained music needs (`BlockAdaptiveFilter.keepsStartupStep`). Leave it
    /// false when in doubt. Real-time safe; set it before `process`.
    public var isFarEndAlone: Bool {
        get { filter.keepsStartupStep }
        set { filter.keepsStartupStep = newValue }
    }

    /// The last block's echo the adapting filter leaks over its error's energy, from the learning rate's leak
    /// estimate: well above 1 when the error is echo the filter has not learned, near 0 when a near talker holds it
    /// (`MDFLearningRate.leakedEchoToErrorRatio`). Real-time safe.
    var leakedEchoToErrorRatio: Float { filter.leakedEchoToErrorRatio }

    /// Whether the last block found the learned path lost and took the shadow filter's instead, learning again
    /// from the start-up rate (`BlockAdaptiveFilter.restartedFromShadow`). Real-time safe.
    public var restartedFromShadow: Bool { filter.restartedFromShadow }

    /// Whether the shadow filter, which learns at a fixed rate, takes 6 dB or more off the microphone: there is echo to
    /// cancel (`BlockAdaptiveFilter.isShadowCancelling`). Real-time safe.
    public var isShadowCancelling: Bool { filter.isShadowCancelling }

    /// The level at which the loudspeaker was found to saturate, as a fraction of full scale (the knee of the
    /// limiter the reference is shaped by before the filter, `LoudspeakerSaturation`); nil while it is taken for
    /// linear. It is a property of the loudspeaker, not of the path: `reset` keeps it. Real-time safe.
    public var loudspeakerKneeLevel: Float? { filter.saturation.kneeLevel }

    /// Forgets the learned echo path. Real-time safe.
    public func reset() { filter.reset() }
}
