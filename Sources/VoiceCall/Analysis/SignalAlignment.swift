/// Finds how far one recording lags another: the lag (in frames, possibly negative) at which the normalized
/// cross-correlation of `test` against `reference` peaks, searched on every `coarseStep`-th sample first and
/// refined around the best coarse lag. For checking calls end to end (interoperability, mouth-to-ear latency).
/// Allocates nothing; not meant for the real-time thread (cost grows with signal length × lag range).
public struct SignalAlignment: Sendable, Hashable {
    /// `test[i + lagFrames]` matches `reference[i]`.
    public var lagFrames: Int
    /// Pearson correlation at that lag, -1 ... 1.
    public var correlation: Double

    public init(lagFrames: Int, correlation: Double) {
        self.lagFrames = lagFrames
        self.correlation = correlation
    }

    /// Searches lags in `lagRange` (frames). Both signals at the same rate.
    public static func find(reference: UnsafeBufferPointer<Float>, test: UnsafeBufferPointer<Float>,
                            lagRange: ClosedRange<Int>, coarseStep: Int = 4) -> SignalAlignment {
        var best = SignalAlignment(lagFrames: lagRange.lowerBound, correlation: -2)
        for lag in stride(from: lagRange.lowerBound, through: lagRange.upperBound, by: max(coarseStep, 1)) {
            let value = correlation(reference, test, lag: lag, step: coarseStep)
            if value > best.correlation { best = SignalAlignment(lagFrames: lag, correlation: value) }
        }
        let coarseLag = best.lagFrames
        best.correlation = -2
        for lag in max(lagRange.lowerBound, coarseLag - coarseStep)...min(lagRange.upperBound, coarseLag + coarseStep) {
            let value = correlation(reference, test, lag: lag, step: 1)
            if value > best.correlation { best = SignalAlignment(lagFrames: lag, correlation: value) }
        }
        return best
    }

    /// The median over consecutive `windowFrames` windows of `reference` (those with sound: RMS above
    /// `minimumRMS`) of each window's best correlation with `test`, each searched within `windowLagRange` of
    /// `overall.lagFrames`: robust to a call's playout delay changing (jitter-buffer growth, concealment), which
    /// lowers a single-lag correlation. Nil when no window has sound.
    public static func windowedMedianCorrelation(reference: UnsafeBufferPointer<Float>, test: UnsafeBufferPointer<Float>,
                                                 overall: SignalAlignment, windowFrames: Int, windowLagRange: Int,
                                                 minimumRMS: Float = 0.003) -> Double? {
        var values: [Double] = []
        var start = 0
        while windowFrames > 0 && start + windowFrames <= reference.count {
            let window = UnsafeBufferPointer(rebasing: reference[start..<(start + windowFrames)])
            var sumOfSquares: Float = 0
            for sample in window { sumOfSquares += sample * sample }
            if (sumOfSquares / Float(windowFrames)).squareRoot() > minimumRMS {
                let centre = overall.lagFrames + start
                values.append(find(reference: window, test: test,
                                   lagRange: (centre - windowLagRange)...(centre + windowLagRange)).correlation)
            }
            start += windowFrames
        }
        guard !values.isEmpty else { return nil }
        values.sort()
        return values[values.count / 2]
    }

    /// Pearson correlation of `reference[i]` with `test[i + lag]` over their overlap, every `step`-th frame.
    public static func correlation(_ reference: UnsafeBufferPointer<Float>, _ test: UnsafeBufferPointer<Float>,
                                   lag: Int, step: Int = 1) -> Double {
        let first = max(0, -lag)
        let end = min(reference.count, test.count - lag)
        guard end - first > 1 else { return 0 }
        var sumA = 0.0, sumB = 0.0, sumAB = 0.0, sumAA = 0.0, sumBB = 0.0, count = 0.0
        var index = first
        while index < end {
            let x = Double(reference[index]), y = Double(test[index + lag])
            sumA += x; sumB += y; sumAB += x * y; sumAA += x * x; sumBB += y * y
            count += 1
            index += max(step, 1)
        }
        let variance = (sumAA - sumA * sumA / count) * (sumBB - sumB * sumB / count)
        return variance > 0 ? (sumAB - sumA * sumB / count) / variance.squareRoot() : 0
    }
}
