/// Converts a mono stream between two rates with speexdsp, or copies it when the rates match (no conversion
/// is the best conversion). `convert` is real-time safe; one thread at a time.
public final class RateConverter {
    public let inputRate: Int
    public let outputRate: Int
    /// Most frames `convert` yields for `maximumInputFrames` frames in.
    public let maximumOutputFrames: Int
    private let resampler: Resampler?

    /// Speex quality 5: clean enough that echo and reference see the same linear filter, cheap enough for voice.
    public static let quality = 5

    /// Not real-time safe.
    public init(inputRate: Int, outputRate: Int, maximumInputFrames: Int) throws(SpeexError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        if inputRate == outputRate {
            resampler = nil
            maximumOutputFrames = maximumInputFrames
        } else {
            let resampler = try Resampler(inputRate: inputRate, outputRate: outputRate, quality: Self.quality)
            self.resampler = resampler
            maximumOutputFrames = resampler.maximumOutputFrames(inputFrames: maximumInputFrames)
        }
    }

    /// Frames of delay the conversion adds, in output frames, measured once on an impulse (speexdsp's own
    /// latency figure is off by a few frames when down-converting).
    public private(set) lazy var latencyFrames: Int = measureLatency()

    private func measureLatency() -> Int {
        guard resampler != nil,
              let probe = try? Resampler(inputRate: inputRate, outputRate: outputRate, quality: Self.quality) else {
            return 0
        }
        let inputFrames = 4 * inputRate / 100
        var impulse = [Float](repeating: 0, count: inputFrames)
        impulse[0] = 1
        var output = [Float](repeating: 0, count: probe.maximumOutputFrames(inputFrames: inputFrames))
        let produced = impulse.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { probe.process(input: input, output: $0).outputFrames }
        }
        var peak = 0
        for index in 0..<produced where abs(output[index]) > abs(output[peak]) { peak = index }
        return peak
    }

    /// Converts all of `input` into `output` (room for `maximumOutputFrames`); returns the frames written.
    /// Real-time safe.
    public func convert(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>) -> Int {
        guard let resampler else {
            let count = min(input.count, output.count)
            if count > 0 { output.baseAddress!.update(from: input.baseAddress!, count: count) }
            return count
        }
        var consumed = 0
        var produced = 0
        while consumed < input.count, produced < output.count {
            let result = resampler.process(input: UnsafeBufferPointer(rebasing: input[consumed...]),
                                           output: UnsafeMutableBufferPointer(rebasing: output[produced...]))
            if result.inputFrames == 0 && result.outputFrames == 0 { break }
            consumed += result.inputFrames
            produced += result.outputFrames
        }
        return produced
    }
}
