/// Down-converts a mono stream (48 → 16 kHz, 44.1 → 16 kHz, 48 → 8 kHz, ...) with speexdsp's own filter, held
/// as a table of polyphase taps.
///
/// Down-converting by num/den (the rates over their greatest common divisor), speexdsp's resampler keeps
/// `tapCount − 1` frames of history (zeros at the start) and computes output frame n from the `tapCount` frames
/// that start at s(n) = ⌊n·num/den⌋ in the history-and-input stream, with the filter of phase (n·num) mod den. For
/// a whole factor (den = 1) it holds that one filter; otherwise it holds an oversampled filter and interpolates
/// the phase's taps from it on every output frame (four products per tap), which is what most of a 44.1 kHz
/// device's conversion cost was. Here every phase's taps are read off a speexdsp resampler of the same rates and
/// quality at `init` (a run over impulses spaced wider than the filter, so each output sees one), kept in a table
/// (den × `tapCount` floats), and each output is one dot product. For a whole factor (48 → 16 kHz) the one filter is
/// symmetric about its centre tap (speexdsp's windowed sinc, plus one last tap), so each output folds the frames
/// that meet equal taps and takes half the products: a copy of the history kept in reverse order makes the far
/// half read forwards. Built with `alignsToOutputFrames` false, the output is speexdsp's within float rounding (the
/// sums' order differs), with the same latency and the same frame counts.
///
/// speexdsp delays the input by half its filter, N/2 input frames, which by a fraction is not a whole number of
/// output frames: from 44.1 kHz to 16 kHz, 112 frames are 40.64 output frames, so whatever whole latency is taken
/// off, the output stays a third of a frame off the input's time line (white noise compared with a reference
/// conversion, soxr's, differs from it by −5.6 dB over 0.1-6.4 kHz; −77 dB aligned). Aligned (the default), the first
/// output is taken (N/2·den mod num)/den input frames later than speexdsp's, which makes the latency exactly
/// `latencyFrames` = ⌊N/2·den/num⌋ output frames. Whole factors (48 → 16 kHz) are aligned already.
///
/// `init` allocates and runs the probe (milliseconds) and is not real-time safe; `process` and `reset` are
/// real-time safe. One thread at a time.
public final class PolyphaseDecimator {
    public let inputRate: Int
    public let outputRate: Int
    /// FIR taps per phase (speexdsp's filter length, a multiple of 8).
    public let tapCount: Int
    /// Filter phases: the output rate over the rates' greatest common divisor.
    public let phaseCount: Int
    /// Most table entries (phases × taps) a decimator holds: 256 KB.
    public static let maximumTableCount = 1 << 16
    /// Input frames taken into the history at a time (any count is processed, in pieces of this size).
    private static var pieceFrames: Int { 1024 }
    /// The input rate over the rates' greatest common divisor: input frames per `phaseCount` outputs.
    private let inputStep: Int
    /// Phase p's taps at p × `tapCount`, in the order they multiply the history (tap 0 meets the oldest frame).
    private let taps: UnsafeMutablePointer<Float>
    /// `tapCount − 1` frames of history followed by the frames of the current piece of input.
    private let history: UnsafeMutablePointer<Float>
    private var historyCapacity: Int { tapCount - 1 + Self.pieceFrames }
    /// When the single filter is symmetric about tap c = `tapCount` / 2 − 1 (taps[c − i] = taps[c + i], i in
    /// 1 ... c; the last tap stands alone): taps 0 ... c with the centre halved, and `history` back to front (entry
    /// i holds history[`historyCapacity` − 1 − i]); nil when it has phases, or is not symmetric.
    private let fold: (taps: UnsafeMutablePointer<Float>, reversedHistory: UnsafeMutablePointer<Float>)?
    /// Taps in `fold.taps`: c + 1 = `tapCount` / 2, a multiple of 4.
    private var foldedCount: Int { tapCount / 2 }
    /// Index into the current piece (0 = its first frame) of the next output's first tap, minus the history, and
    /// the next output's phase: speexdsp's `last_sample` and `samp_frac_num`.
    private var nextStart = 0
    private var phase = 0
    /// Where the first output starts (`nextStart`, `phase`): 0, 0 as speexdsp, or later to align the latency.
    private let firstStart: Int
    private let firstPhase: Int
    /// The delay in output frames: an input frame at time t comes out at t + `latencyFrames` output frames (exactly
    /// when aligned; speexdsp's own delay rounded down otherwise).
    public let latencyFrames: Int

    /// A decimator with the filter of speexdsp's resampler at `quality` (0 ... 10) from `inputRate` down to
    /// `outputRate`, its latency a whole number of output frames unless `alignsToOutputFrames` is false (then its
    /// output is speexdsp's); throws for an up-conversion or a table above `maximumTableCount`. Not real-time safe.
    public init(inputRate: Int, outputRate: Int, quality: Int, alignsToOutputFrames: Bool = true) throws(SpeexError) {
        guard outputRate > 0, inputRate > outputRate else {
            throw .invalidArgument("\(inputRate) Hz to \(outputRate) Hz is not a down-conversion")
        }
        let probe = try Resampler(inputRate: inputRate, outputRate: outputRate, quality: quality)
        var (a, b) = (inputRate, outputRate)
        while b != 0 { (a, b) = (b, a % b) }
        self.inputRate = inputRate
        self.outputRate = outputRate
        inputStep = inputRate / a
        phaseCount = outputRate / a
        // speexdsp reports half its filter length as the input latency; down-converting, it rounds the length up
        // to a multiple of 8.
        tapCount = 2 * probe.inputLatencyFrames
        guard tapCount >= 8, tapCount % 8 == 0, phaseCount * tapCount <= Self.maximumTableCount else {
            throw .invalidArgument("speexdsp's filter from \(inputRate) Hz to \(outputRate) Hz (\(phaseCount) phases of \(tapCount) taps) does not fit a table")
        }
        let first = Self.start(tapCount: tapCount, inputStep: inputStep, phaseCount: phaseCount,
                               aligned: alignsToOutputFrames)
        (firstStart, firstPhase, latencyFrames) = first
        (nextStart, phase) = (first.start, first.phase)
        taps = .allocate(capacity: phaseCount * tapCount)
        taps.initialize(repeating: 0, count: phaseCount * tapCount)
        let capacity = tapCount - 1 + Self.pieceFrames
        history = .allocate(capacity: capacity)
        history.initialize(repeating: 0, count: capacity)
        do {
            try Self.readTaps(from: probe, into: taps, tapCount: tapCount, phaseCount: phaseCount, inputStep: inputStep)
        } catch {
            taps.deallocate()
            history.deallocate()
            throw error
        }
        fold = Self.fold(taps, count: tapCount, phaseCount: phaseCount, historyCapacity: capacity)
    }

    /// The first output's start (frame and phase) and the latency in output frames. speexdsp's output n sits at
    /// n·num/den input frames and reaches back N/2 of them: a latency of N/2·den/num output frames. Starting
    /// (N/2·den mod num)/den input frames later makes it the whole ⌊N/2·den/num⌋.
    private static func start(tapCount: Int, inputStep: Int, phaseCount: Int, aligned: Bool)
        -> (start: Int, phase: Int, latency: Int) {
        let halfFilterPhases = tapCount / 2 * phaseCount
        let offset = aligned ? halfFilterPhases % inputStep : 0
        return (offset / phaseCount, offset % phaseCount, halfFilterPhases / inputStep)
    }

    /// `fold` for a filter of `count` taps (allocated), or nil.
    private static func fold(_ taps: UnsafePointer<Float>, count: Int, phaseCount: Int, historyCapacity: Int)
        -> (taps: UnsafeMutablePointer<Float>, reversedHistory: UnsafeMutablePointer<Float>)? {
        let centre = count / 2 - 1
        guard phaseCount == 1, centre > 0 else { return nil }
        for i in 1...centre where taps[centre - i] != taps[centre + i] { return nil }
        let folded = UnsafeMutablePointer<Float>.allocate(capacity: centre + 1)
        folded.initialize(from: taps, count: centre + 1)
        folded[centre] *= 0.5
        let reversed = UnsafeMutablePointer<Float>.allocate(capacity: historyCapacity)
        reversed.initialize(repeating: 0, count: historyCapacity)
        return (folded, reversed)
    }

    /// A decimator with `other`'s rates and filter, its table copied rather than read off a probe again (the probe
    /// is nearly all of `init`'s cost: 68 M instructions from 44.1 to 16 kHz, as much as 0.7 s of processing), and
    /// a history of its own (zeros). Not real-time safe.
    public init(copying other: PolyphaseDecimator) {
        inputRate = other.inputRate
        outputRate = other.outputRate
        tapCount = other.tapCount
        phaseCount = other.phaseCount
        inputStep = other.inputStep
        (firstStart, firstPhase, latencyFrames) = (other.firstStart, other.firstPhase, other.latencyFrames)
        (nextStart, phase) = (other.firstStart, other.firstPhase)
        taps = .allocate(capacity: phaseCount * tapCount)
        taps.initialize(from: other.taps, count: phaseCount * tapCount)
        let capacity = tapCount - 1 + Self.pieceFrames
        history = .allocate(capacity: capacity)
        history.initialize(repeating: 0, count: capacity)
        fold = Self.fold(other.taps, count: tapCount, phaseCount: phaseCount, historyCapacity: capacity)
    }

    deinit {
        taps.deallocate()
        history.deallocate()
        fold?.taps.deallocate()
        fold?.reversedHistory.deallocate()
    }

    /// Output n starts at s = ⌊n·num/den⌋ (history-and-input frames) and an impulse at input frame p reaches it
    /// through tap p + tapCount − 1 − s. With impulses every `spacing` ≥ `tapCount` frames each output sees at
    /// most one: the one r = s mod spacing frames before its start, through tap tapCount − 1 − r. Outputs of one
    /// phase start num frames apart, so with a spacing prime to num, `spacing` of them see every r.
    private static func readTaps(from probe: Resampler, into taps: UnsafeMutablePointer<Float>, tapCount: Int,
                                 phaseCount: Int, inputStep: Int) throws(SpeexError) {
        var spacing = tapCount
        while gcd(spacing, inputStep) != 1 { spacing += 1 }
        let inputFrames = (spacing + 2) * inputStep + tapCount
        var impulses = [Float](repeating: 0, count: inputFrames)
        for position in stride(from: 0, to: inputFrames, by: spacing) { impulses[position] = 1 }
        var response = [Float](repeating: 0, count: probe.maximumOutputFrames(inputFrames: inputFrames))
        let produced = impulses.withUnsafeBufferPointer { input in
            response.withUnsafeMutableBufferPointer { probe.process(input: input, output: $0).outputFrames }
        }
        var found = [Bool](repeating: false, count: phaseCount * tapCount)
        for output in 0..<produced {
            let start = output * inputStep / phaseCount
            let before = start % spacing
            guard before < tapCount else { continue }
            let entry = (output * inputStep % phaseCount) * tapCount + tapCount - 1 - before
            taps[entry] = response[output]
            found[entry] = true
        }
        guard !found.contains(false) else {
            throw .invalidArgument("speexdsp's filter from \(probe.inputRate) Hz to \(probe.outputRate) Hz could not be read")
        }
    }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    /// Output frames `process` yields at most for `inputFrames` frames in.
    public func maximumOutputFrames(inputFrames: Int) -> Int {
        (inputFrames * phaseCount + inputStep - 1) / inputStep + 1
    }

    /// Converts `input` into `output` until either runs out, as speexdsp's resampler does: returns the frames of
    /// each used (input left over when `output` filled up must be offered again). Real-time safe.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>)
        -> (inputFrames: Int, outputFrames: Int) {
        guard var source = input.baseAddress, let destination = output.baseAddress else { return (0, 0) }
        let kept = tapCount - 1
        let intAdvance = inputStep / phaseCount, fracAdvance = inputStep % phaseCount
        var remaining = input.count
        var consumed = 0, produced = 0
        while remaining > 0 && produced < output.count {
            let count = min(remaining, Self.pieceFrames)
            (history + kept).update(from: source, count: count)
            if let reversed = fold?.reversedHistory {
                let last = historyCapacity - 1 - kept
                for i in 0..<count { reversed[last &- i] = source[i] }
            }
            while nextStart < count && produced < output.count {
                if let fold {
                    destination[produced] = foldedDot(at: nextStart, fold.taps, fold.reversedHistory)
                } else {
                    destination[produced] = dot(taps + phase * tapCount, history + nextStart)
                }
                produced += 1
                nextStart += intAdvance
                phase += fracAdvance
                if phase >= phaseCount {
                    phase -= phaseCount
                    nextStart += 1
                }
            }
            // What the next output needs stays: the last `kept` frames before it become the history.
            let used = min(nextStart, count)
            nextStart -= used
            history.update(from: history + used, count: kept)
            if let reversed = fold?.reversedHistory {
                (reversed + historyCapacity - kept).update(from: reversed + historyCapacity - kept - used, count: kept)
            }
            source += used
            remaining -= used
            consumed += used
        }
        return (consumed, produced)
    }

    /// Forgets the history, as if no frame had been processed. Real-time safe.
    public func reset() {
        history.update(repeating: 0, count: historyCapacity)
        fold?.reversedHistory.update(repeating: 0, count: historyCapacity)
        (nextStart, phase) = (firstStart, firstPhase)
    }

    /// The output whose first tap meets history frame `start`, from the folded filter: Σᵢ f[i]·(x[i] + x[2c − i])
    /// over i ≤ c (f: `fold.taps`, the centre tap halved as it meets its own frame twice), plus the last tap. The
    /// far frames x[2c − i] are read forwards from `fold.reversedHistory`.
    @inline(__always) private func foldedDot(at start: Int, _ foldedTaps: UnsafePointer<Float>,
                                             _ reversed: UnsafePointer<Float>) -> Float {
        let near = UnsafePointer(history + start)
        let far = reversed + (historyCapacity + 1 - tapCount - start)
        return Self.sum(count: foldedCount) { i in
            SpectrumLanes(loading: foldedTaps + i) * (SpectrumLanes(loading: near + i) + SpectrumLanes(loading: far + i))
        } + taps[tapCount &- 1] * near[tapCount &- 1]
    }

    /// Σⱼ h[j]·frames[j] over the taps.
    @inline(__always) private func dot(_ h: UnsafePointer<Float>, _ frames: UnsafePointer<Float>) -> Float {
        Self.sum(count: tapCount) { i in SpectrumLanes(loading: h + i) * SpectrumLanes(loading: frames + i) }
    }

    /// Σ of `lanes(i)` for i = 0, 4, 8 … below `count` (a multiple of 4), sixteen floats a step in four running
    /// sums. `SpectrumLanes` keeps unoptimised builds fast too.
    @inline(__always) private static func sum(count: Int, _ lanes: (Int) -> SpectrumLanes) -> Float {
        var sum0 = SpectrumLanes(repeating: 0), sum1 = SpectrumLanes(repeating: 0)
        var sum2 = SpectrumLanes(repeating: 0), sum3 = SpectrumLanes(repeating: 0)
        var i = 0
        while i &+ 16 <= count {
            sum0 = sum0 + lanes(i)
            sum1 = sum1 + lanes(i &+ 4)
            sum2 = sum2 + lanes(i &+ 8)
            sum3 = sum3 + lanes(i &+ 12)
            i &+= 16
        }
        while i < count {
            sum0 = sum0 + lanes(i)
            i &+= 4
        }
        let sum = (sum0 + sum2) + (sum1 + sum3)
        return (sum.x + sum.y) + (sum.z + sum.w)
    }
}
