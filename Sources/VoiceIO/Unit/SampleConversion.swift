/// Float (full scale ±1) ↔ Int16 (full scale 32768) sample conversion. Real-time safe.
public enum SampleConversion {
    /// Converts `min(source.count, destination.count)` samples, rounding (halves away from zero) and clipping at
    /// full scale, eight at a time.
    @inlinable
    public static func int16(from source: UnsafeBufferPointer<Float>, into destination: UnsafeMutableBufferPointer<Int16>) {
        let count = min(source.count, destination.count)
        guard count > 0, let input = source.baseAddress, let output = destination.baseAddress else { return }
        var index = 0
        while index + 8 <= count {
            let scaled = UnsafeRawPointer(input + index).loadUnaligned(as: SIMD8<Float>.self) * 32768
            var clipped = scaled
            clipped.replace(with: -32768, where: scaled .< -32768)
            clipped.replace(with: 32767, where: scaled .> 32767)
            // Adding 1.5·2²³ leaves the nearest integer (halves to even) in the mantissa's low bits; a half that
            // went to even towards zero is then stepped away from zero, as `rounded()` does.
            let shifted = clipped + SIMD8(repeating: 12_582_912)
            let dropped = clipped - (shifted - SIMD8(repeating: 12_582_912))
            var whole = unsafeBitCast(shifted, to: SIMD8<Int32>.self) &- 0x4B40_0000
            whole.replace(with: whole &+ 1, where: (dropped .== 0.5) .& (clipped .> 0))
            whole.replace(with: whole &- 1, where: (dropped .== -0.5) .& (clipped .< 0))
            UnsafeMutableRawPointer(output + index).storeBytes(of: SIMD8<Int16>(truncatingIfNeeded: whole),
                                                              as: SIMD8<Int16>.self)
            index += 8
        }
        while index < count {
            let scaled = (input[index] * 32768).rounded()
            output[index] = Int16(min(max(scaled, -32768), 32767))
            index += 1
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
