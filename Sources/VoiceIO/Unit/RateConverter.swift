/// Converts a mono stream between two rates with speexdsp, or copies it when the rates match (no conversion
/// is the best conversion). A down-conversion runs speexdsp's filter from a table (`PolyphaseDecimator`): by a
/// fraction (44.1 → 16 kHz), where speexdsp would interpolate its filter's taps on every output frame, from a table
/// of its phases; by a whole factor (48 → 16 kHz), folded about its centre for half the products. The same output
/// within float rounding, a fraction of the cost.
/// `convert` is real-time safe; one thread at a time.
public final class RateConverter {
    public let inputRate: Int
    public let outputRate: Int
    /// Most frames `convert` yields for `maximumInputFrames` frames in.
    public let maximumOutputFrames: Int
    private let resampler: Resampler?
    private let decimator: PolyphaseDecimator?

    /// Speex quality 5: clean enough that echo and reference see the same linear filter, cheap enough for voice.
    public static let quality = 5

    /// Not real-time safe.
    public convenience init(inputRate: Int, outputRate: Int, maximumInputFrames: Int) throws(SpeexError) {
        try self.init(inputRate: inputRate, outputRate: outputRate, maximumInputFrames: maximumInputFrames,
                      decimatorTemplate: nil)
    }

    /// A converter between `other`'s rates, for a second stream beside it: a decimator's table is copied from
    /// `other`'s instead of being read off a probe again (`PolyphaseDecimator.init(copying:)`). Not real-time safe.
    public convenience init(like other: RateConverter, maximumInputFrames: Int) throws(SpeexError) {
        try self.init(inputRate: other.inputRate, outputRate: other.outputRate, maximumInputFrames: maximumInputFrames,
                      decimatorTemplate: other.decimator)
    }

    private init(inputRate: Int, outputRate: Int, maximumInputFrames: Int,
                 decimatorTemplate: PolyphaseDecimator?) throws(SpeexError) {
        self.inputRate = inputRate
        self.outputRate = outputRate
        if inputRate == outputRate {
            resampler = nil
            decimator = nil
            maximumOutputFrames = maximumInputFrames
        } else if inputRate > outputRate,
                  let decimator = decimatorTemplate.map(PolyphaseDecimator.init(copying:))
                    ?? (try? PolyphaseDecimator(inputRate: inputRate, outputRate: outputRate, quality: Self.quality)) {
            // (A filter whose table would be too large stays with speexdsp.)
            resampler = nil
            self.decimator = decimator
            maximumOutputFrames = decimator.maximumOutputFrames(inputFrames: maximumInputFrames)
        } else {
            let resampler = try Resampler(inputRate: inputRate, outputRate: outputRate, quality: Self.quality)
            self.resampler = resampler
            decimator = nil
            maximumOutputFrames = resampler.maximumOutputFrames(inputFrames: maximumInputFrames)
        }
    }

    /// Frames of delay the conversion adds, in output frames: a decimator's exact whole latency (it aligns its
    /// output to the input's time line), else measured once on an impulse (speexdsp's own latency figure is off by
    /// a few frames when down-converting).
    public private(set) lazy var latencyFrames: Int = decimator?.latencyFrames ?? measureLatency()

    private func measureLatency() -> Int {
        guard inputRate != outputRate,
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
        guard resampler != nil || decimator != nil else {
            let count = min(input.count, output.count)
            if count > 0 { output.baseAddress!.update(from: input.baseAddress!, count: count) }
            return count
        }
        var consumed = 0
        var produced = 0
        while consumed < input.count, produced < output.count {
            let rest = UnsafeBufferPointer(rebasing: input[consumed...])
            let room = UnsafeMutableBufferPointer(rebasing: output[produced...])
            let result = decimator?.process(rest, into: room) ?? resampler!.process(input: rest, output: room)
            if result.inputFrames == 0 && result.outputFrames == 0 { break }
            consumed += result.inputFrames
            produced += result.outputFrames
        }
        return produced
    }
}
