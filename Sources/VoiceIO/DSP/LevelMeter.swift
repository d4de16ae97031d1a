#if canImport(Glibc)
import Glibc
#endif

/// The level of one block: RMS and peak in dB relative to full scale (1.0 for Float, 32768 for Int16).
public struct Level: Sendable, Equatable, Codable {
    /// What silence (and anything quieter) reads as.
    public static let floorDBFS: Float = -120
    public static let silence = Level(rmsDBFS: floorDBFS, peakDBFS: floorDBFS)

    public var rmsDBFS: Float
    public var peakDBFS: Float

    public init(rmsDBFS: Float, peakDBFS: Float) {
        self.rmsDBFS = rmsDBFS
        self.peakDBFS = peakDBFS
    }

    /// Whether the peak reached full scale (`LevelMeter.clippingAmplitude`): the signal clipped.
    var reachesFullScale: Bool { peakDBFS >= LevelMeter.dBFS(amplitude: Double(LevelMeter.clippingAmplitude)) }
}

/// Measures block levels. Every function is real-time safe.
public enum LevelMeter {
    /// RMS and peak of `block` (samples, full scale 1.0); an empty block reads as silence.
    public static func measure(_ block: UnsafeBufferPointer<Float>) -> Level {
        var sumOfSquares: Double = 0
        var peak: Float = 0
        for sample in block {
            sumOfSquares += Double(sample * sample)
            peak = max(peak, abs(sample))
        }
        return level(sumOfSquares: sumOfSquares, peak: Double(peak), sampleCount: block.count)
    }

    /// RMS and peak of `block` (samples, full scale 32768); an empty block reads as silence.
    public static func measure(_ block: UnsafeBufferPointer<Int16>) -> Level {
        var sumOfSquares: Double = 0
        var peak: Int32 = 0
        for sample in block {
            let value = Int32(sample)
            sumOfSquares += Double(value * value)
            peak = max(peak, abs(value))
        }
        let fullScale: Double = 32768
        return level(sumOfSquares: sumOfSquares / (fullScale * fullScale), peak: Double(peak) / fullScale, sampleCount: block.count)
    }

    /// How many samples of `block` (full scale 1.0) are at full scale or beyond: a converter's 16-bit full scale,
    /// 32767/32768, counts.
    static func fullScaleCount(_ block: UnsafeBufferPointer<Float>) -> Int {
        var count = 0
        for sample in block where abs(sample) >= Self.clippingAmplitude { count += 1 }
        return count
    }

    /// The largest 16-bit sample as a fraction of full scale: a sample this loud or louder clipped.
    static var clippingAmplitude: Float { 32767 / 32768 }

    /// `amplitude` (full scale 1) in dBFS, clamped to the floor.
    public static func dBFS(amplitude: Double) -> Float {
        guard amplitude > 0 else { return Level.floorDBFS }
        return max(Float(20 * log10(amplitude)), Level.floorDBFS)
    }

    private static func level(sumOfSquares: Double, peak: Double, sampleCount: Int) -> Level {
        guard sampleCount > 0 else { return .silence }
        return Level(rmsDBFS: dBFS(amplitude: (sumOfSquares / Double(sampleCount)).squareRoot()),
                     peakDBFS: dBFS(amplitude: peak))
    }
}
