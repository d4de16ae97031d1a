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
    /// The echo tail the filter covers now, in frames, whole partitions of 10 ms (`BlockAdaptiveFilter`; typically
    /// 100–500 ms of audio).
    public var filterLengthFrames: Int { filter.partitionCount * filter.partitionFrameCount }
    /// The longest echo tail the filter can grow to (`extendFilter(toFrames:)`), in frames, whole partitions.
    public var longestFilterLengthFrames: Int { filter.longestPartitionCount * filter.partitionFrameCount }
    private let filter: BlockAdaptiveFilter
    private let taps: UnsafeMutablePointer<Float>

    /// `longestFilterLengthMilliseconds`: the most `extendFilter(toFrames:)` grows the filter to (nil: it cannot grow).
    /// Not real-time safe (allocates the filter, at its longest).
    public init(frameCount: Int, filterLengthMilliseconds: Double, longestFilterLengthMilliseconds: Double? = nil,
                sampleRate: Int) throws(SpeexError) {
        try SpeexError.validate(frameCount: frameCount, sampleRate: sampleRate)
        let filterLengthFrames = try Self.frames(filterLengthMilliseconds, frameCount: frameCount, sampleRate: sampleRate)
        let longestFrames = try Self.frames(longestFilterLengthMilliseconds ?? filterLengthMilliseconds,
                                            frameCount: frameCount, sampleRate: sampleRate)
        guard longestFrames >= filterLengthFrames else {
            throw .invalidArgument("longest echo filter length \(longestFrames) frames is shorter than the filter's \(filterLengthFrames)")
        }
        filter = BlockAdaptiveFilter(frameCount: frameCount, filterLengthFrames: filterLengthFrames,
                                     longestFilterLengthFrames: longestFrames, sampleRate: sampleRate)
        let longestTaps = filter.longestPartitionCount * filter.partitionFrameCount
        taps = .allocate(capacity: longestTaps)
        taps.initialize(repeating: 0, count: longestTaps)
        self.frameCount = frameCount
        self.sampleRate = sampleRate
    }

    /// A filter length in frames, validated: 0–10 s, at least one block.
    private static func frames(_ milliseconds: Double, frameCount: Int, sampleRate: Int) throws(SpeexError) -> Int {
        guard milliseconds.isFinite, milliseconds > 0, milliseconds <= 10_000 else {
            throw .invalidArgument("echo filter length \(milliseconds) ms is outside 0–10000 ms")
        }
        let frames = Int((milliseconds * Double(sampleRate) / 1000).rounded())
        guard frames >= frameCount else {
            throw .invalidArgument("echo filter length \(frames) frames is shorter than one block of \(frameCount) frames")
        }
        return frames
    }

    deinit { taps.deallocate() }

    /// Cancels the echo in one block. Each pointer covers `frameCount` frames: the microphone, the reference
    /// (what the loudspeaker played, aligned), and the output, which may not alias the inputs. Real-time safe.
    public func process(microphone: UnsafePointer<Int16>, reference: UnsafePointer<Int16>,
                        output: UnsafeMutablePointer<Int16>) {
        filter.process(microphone: microphone, reference: reference, output: output)
    }

    /// Taps `impulseResponse(into:)` writes: the filter's length now (`filterLengthFrames`).
    public var impulseResponseFrameCount: Int { filterLengthFrames }

    /// What `impulseResponse(into:)`'s taps are multiplied by: 32767 times two partitions, the transform's length (the
    /// scale speexdsp's canceller used, kept for `EchoTailEstimator`).
    public var impulseResponseScale: Float { 32767 * Float(filter.windowFrameCount) }

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

    /// Whether a near talker is heard over the far end: the filter then takes `nearTalkerStepShare` of its step, so
    /// that the talker pulls it less. Leave it false for a block that may be echo of a path that moved, which the
    /// filter must learn at its full step. Real-time safe; set it before `process`.
    public var isNearTalkerHeard: Bool {
        get { filter.isNearTalkerHeard }
        set { filter.isNearTalkerHeard = newValue }
    }

    /// Whether the near talker has been heard for a second (`LeakedEchoWatch.isTalkerHeardLong`): a path that moves
    /// under them is then found from how the filter's estimates differ (`TalkerPathMove`). Real-time safe; set it
    /// before `process`.
    var isTalkerHeardLong: Bool {
        get { filter.isTalkerHeardLong }
        set { filter.isTalkerHeardLong = newValue }
    }

    /// The share of its step the filter takes while `isNearTalkerHeard` (1: the whole step, as by default). The
    /// learning rate's leak estimate slows it in double talk, not enough: a talker pulls the filter (the public hall
    /// q03: the linear filter's echo 22.7 dB down before the double talk, 12-15 dB down in it). Real-time safe.
    public var nearTalkerStepShare: Float {
        get { filter.nearTalkerStepShare }
        set { filter.nearTalkerStepShare = min(max(newValue, 0), 1) }
    }

    /// The last block's echo the adapting filter leaks over its error's energy, from the learning rate's leak
    /// estimate: well above 1 when the error is echo the filter has not learned, near 0 when a near talker holds it
    /// (`MDFLearningRate.leakedEchoToErrorRatio`). Real-time safe.
    var leakedEchoToErrorRatio: Float { filter.leakedEchoToErrorRatio }

    /// Whether the last block's microphone clipped (`BlockAdaptiveFilter.isMicrophoneClipped`). Real-time safe.
    var isMicrophoneClipped: Bool { filter.isMicrophoneClipped }

    /// Whether the last block found the learned path lost and took the shadow filter's instead, learning again
    /// from the start-up rate (`BlockAdaptiveFilter.restartedFromShadow`). Real-time safe.
    public var restartedFromShadow: Bool { filter.restartedFromShadow }

    /// Whether that restart was for a path that moved under a near talker (`TalkerPathMove`): the talker is one, and
    /// the echo's coupling to the reference moved less than its shape. Real-time safe.
    var restartedUnderTalker: Bool { filter.restartedUnderTalker }

    /// Whether the shadow filter, which learns at a fixed rate, takes 6 dB or more off the microphone: there is echo to
    /// cancel (`BlockAdaptiveFilter.isShadowCancelling`). Real-time safe.
    public var isShadowCancelling: Bool { filter.isShadowCancelling }
    /// Whether the shadow filter, learning the path the adapted one lost, is 3 dB ahead of it and not yet taking over
    /// (`BlockAdaptiveFilter.isShadowLeading`): the output holds echo a linear filter predicts. Real-time safe.
    var isShadowLeading: Bool { filter.isShadowLeading }

    /// The level at which the loudspeaker was found to saturate, as a fraction of full scale (the knee of the
    /// limiter the reference is shaped by before the filter, `LoudspeakerSaturation`); nil while it is taken for
    /// linear. It is a property of the loudspeaker, not of the path: `reset` keeps it. Real-time safe.
    public var loudspeakerKneeLevel: Float? { filter.saturation.kneeLevel }

    /// Grows the filter to cover `frames` of echo tail (whole partitions, at most `longestFilterLengthFrames`; it never
    /// shrinks), for a room that rings past it: the taps added start from zero, the rest keeps learning as it was. It
    /// stays grown through `reset` (the room's length is not the path's). Real-time safe.
    public func extendFilter(toFrames frames: Int) {
        let partition = filter.partitionFrameCount
        filter.extend(toPartitions: (max(frames, 0) + partition - 1) / partition)
    }

    /// Keeps the filter's weights for `shiftSinceSnapshot`. Real-time safe.
    func takeWeightSnapshot() { filter.takeWeightSnapshot() }

    /// How far the filter's impulse response moved since `takeWeightSnapshot`, in frames (positive: later), measured
    /// up to `highestHertz`, how alike the two responses are but for the move (0 ... 1), and the share of the bins the
    /// reading spreads over (`BlockAdaptiveFilter.shiftSinceSnapshot`). Real-time safe.
    func shiftSinceSnapshot(highestHertz: Double) -> (frames: Float, similarity: Float, spread: Float) {
        filter.shiftSinceSnapshot(highestBin: Int(highestHertz * Double(filter.windowFrameCount) / Double(sampleRate)))
    }

    /// Forgets the learned echo path. Real-time safe.
    public func reset() { filter.reset() }

    /// Keeps the path learned as the previous one, then forgets it as `reset` does, but not the reference's history
    /// (`BlockAdaptiveFilter.resetKeepingPreviousPath`). Real-time safe.
    func resetKeepingPreviousPath() { filter.resetKeepingPreviousPath() }

    /// The previous path's echo estimate of the last block, pre-emphasised (`BlockAdaptiveFilter.previousPathEstimate`).
    /// Real-time safe.
    func previousPathEstimate() -> UnsafeBufferPointer<Float> { filter.previousPathEstimate() }

    /// The last block's microphone as the filter saw it, pre-emphasised. Real-time safe.
    var filteredMicrophone: UnsafeBufferPointer<Float> { filter.filteredMicrophone }

    /// Takes the previous path back, moved `frames` later (earlier when negative). Real-time safe.
    func adoptPreviousPath(shiftedBy frames: Int) { filter.adoptPreviousPath(shiftedBy: frames) }
}
