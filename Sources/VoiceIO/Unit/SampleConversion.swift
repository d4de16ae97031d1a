/// Float (full scale ±1) ↔ Int16 (full scale 32768) sample conversion. Real-time safe.
public enum SampleConversion {
    /// Converts `min(source.count, destination.count)` samples, rounding and clipping at full scale.
    @inlinable
    public static func int16(from source: UnsafeBufferPointer<Float>, into destination: UnsafeMutableBufferPointer<Int16>) {
        for index in 0..<min(source.count, destination.count) {
            let scaled = (source[index] * 32768).rounded()
            destination[index] = Int16(min(max(scaled, -32768), 32767))
        }
    }

    /// Converts `min(source.count, destination.count)` samples.
    @inlinable
    public static func float(from source: UnsafeBufferPointer<Int16>, into destination: UnsafeMutableBufferPointer<Float>) {
        for index in 0..<min(source.count, destination.count) {
            destination[index] = Float(source[index]) * (1 / 32768)
        }
    }
}
