import CSpeexDSP

/// A sample-rate converter over speexdsp's resampler (float API), interleaved frames in and out.
///
/// Owns one `SpeexResamplerState`. Not thread safe: use one instance from one thread at a time (the real-time
/// thread, once created).
public final class Resampler {
    /// Quality levels speexdsp offers: 0 is cheapest, 10 best; 3 suits voice, 4–5 suits music.
    public static let qualityRange = 0...10

    public let inputRate: Int
    public let outputRate: Int
    public let channelCount: Int
    private let state: OpaquePointer

    /// Not real-time safe (allocates the filter).
    public init(inputRate: Int, outputRate: Int, quality: Int, channelCount: Int = 1) throws(SpeexError) {
        for rate in [inputRate, outputRate] {
            try SpeexError.validate(frameCount: 1, sampleRate: rate)
        }
        guard Self.qualityRange.contains(quality) else {
            throw .invalidArgument("resampler quality \(quality) is outside 0–10")
        }
        guard (1...StreamFormat.maxChannelCount).contains(channelCount) else {
            throw .invalidArgument("channel count \(channelCount) is outside 1–\(StreamFormat.maxChannelCount)")
        }
        var code: Int32 = 0
        guard let state = speex_resampler_init(
            UInt32(channelCount), UInt32(inputRate), UInt32(outputRate), Int32(quality), &code
        ) else {
            throw .resampler(code: code)
        }
        self.state = state
        self.inputRate = inputRate
        self.outputRate = outputRate
        self.channelCount = channelCount
    }

    deinit { speex_resampler_destroy(state) }

    /// Frames of input the filter holds back: input frame `n` appears in the output around input time
    /// `n + inputLatencyFrames`. Real-time safe.
    public var inputLatencyFrames: Int { Int(speex_resampler_get_input_latency(state)) }

    /// The same delay in output frames: the first `outputLatencyFrames` output frames are filter warm-up.
    /// Real-time safe.
    public var outputLatencyFrames: Int { Int(speex_resampler_get_output_latency(state)) }

    /// Converts interleaved frames from `input` into `output` and returns how many frames of each were used.
    ///
    /// Consumes as much input as `output` has room for; unconsumed input must be offered again. Buffer sizes
    /// are in samples (frames × channels); a partial trailing frame is ignored. Real-time safe.
    public func process(input: UnsafeBufferPointer<Float>, output: UnsafeMutableBufferPointer<Float>)
        -> (inputFrames: Int, outputFrames: Int) {
        guard let source = input.baseAddress, let destination = output.baseAddress else { return (0, 0) }
        var inputFrames = UInt32(clamping: input.count / channelCount)
        var outputFrames = UInt32(clamping: output.count / channelCount)
        guard inputFrames > 0, outputFrames > 0 else { return (0, 0) }
        let code = speex_resampler_process_interleaved_float(state, source, &inputFrames, destination, &outputFrames)
        guard code == Int32(RESAMPLER_ERR_SUCCESS) else { return (0, 0) }
        return (Int(inputFrames), Int(outputFrames))
    }

    /// Clears the filter history, as if no frame had been processed. Real-time safe.
    public func reset() { speex_resampler_reset_mem(state) }

    /// An upper bound on the output frames `process` yields for `inputFrames` input frames, for sizing buffers.
    /// Real-time safe.
    public func maximumOutputFrames(inputFrames: Int) -> Int {
        (inputFrames * outputRate + inputRate - 1) / inputRate + 2
    }
}

extension Resampler {
    /// Converts a whole mono signal in one call (a one-shot helper, not for streams). Not real-time safe.
    public func convert(_ samples: [Float]) -> [Float] {
        var output = [Float](repeating: 0, count: maximumOutputFrames(inputFrames: samples.count))
        let produced = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { process(input: input, output: $0).outputFrames }
        }
        output.removeLast(output.count - produced)
        return output
    }
}
