import Foundation

enum TestSignals {
    /// A voiced, speech-like signal: a 200–240 Hz gliding fundamental with decaying harmonics under a
    /// syllable-rate envelope, peak about 0.5.
    static func voice(sampleRate: Int, frameCount: Int) -> [Float] {
        var phase = 0.0
        return (0..<frameCount).map { index in
            let time = Double(index) / Double(sampleRate)
            let fundamental = 220 + 20 * sin(2 * .pi * 1.3 * time)
            phase += 2 * .pi * fundamental / Double(sampleRate)
            var value = 0.0
            for harmonic in 1...6 where Double(harmonic) * fundamental < Double(sampleRate) / 2.2 {
                value += sin(Double(harmonic) * phase) / Double(harmonic)
            }
            let envelope = 0.6 + 0.4 * sin(2 * .pi * 3 * time)
            return Float(0.25 * envelope * value)
        }
    }

    /// Pearson correlation of `a[i]` with `b[i + lag]` over the overlap, skipping `skip` frames at the start.
    static func correlation(_ a: [Float], _ b: [Float], lag: Int, skip: Int = 0) -> Double {
        let count = min(a.count, b.count - lag) - skip
        guard count > 1 else { return 0 }
        var sumA = 0.0, sumB = 0.0, sumAB = 0.0, sumAA = 0.0, sumBB = 0.0
        for index in skip..<(skip + count) {
            let x = Double(a[index]), y = Double(b[index + lag])
            sumA += x; sumB += y; sumAB += x * y; sumAA += x * x; sumBB += y * y
        }
        let n = Double(count)
        let covariance = sumAB - sumA * sumB / n
        let variance = (sumAA - sumA * sumA / n) * (sumBB - sumB * sumB / n)
        return variance > 0 ? covariance / variance.squareRoot() : 0
    }

    /// The lag within `radius` of `nominal` where `b` best matches `a`, and that correlation. Aligns decoded
    /// audio by the codec lookahead, allowing for the group delay of its high-pass and resampling filters.
    static func alignment(_ a: [Float], _ b: [Float], nominal: Int, radius: Int, skip: Int) -> (lag: Int, correlation: Double) {
        var best = (lag: nominal, correlation: -1.0)
        for lag in max(0, nominal - radius)...(nominal + radius) {
            let value = correlation(a, b, lag: lag, skip: skip)
            if value > best.correlation { best = (lag, value) }
        }
        return best
    }

    static func rms(_ samples: ArraySlice<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }
}
