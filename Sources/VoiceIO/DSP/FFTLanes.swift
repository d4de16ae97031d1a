/// Four floats that the FFT's butterflies and split passes work on at once (`MixedRadixRealFFT`). Real-time safe.
#if DEBUG
/// Four floats lane by lane, in an unoptimised build: there `SIMD4<Float>`'s operators are generic calls (about 70 ns
/// each), which made the transform 11 times slower than scalar code and too slow for a real-time test. Its
/// transparent operators inline even unoptimised. The same IEEE operations in the same order as `SIMD4<Float>`'s,
/// so both builds compute the same bits.
struct FFTLanes {
    var x: Float, y: Float, z: Float, w: Float
    @_transparent init(_ x: Float, _ y: Float, _ z: Float, _ w: Float) {
        self.x = x; self.y = y; self.z = z; self.w = w
    }
    @_transparent init(repeating value: Float) { self.init(value, value, value, value) }
    @_transparent static func + (a: FFTLanes, b: FFTLanes) -> FFTLanes { FFTLanes(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w) }
    @_transparent static func - (a: FFTLanes, b: FFTLanes) -> FFTLanes { FFTLanes(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w) }
    @_transparent static func * (a: FFTLanes, b: FFTLanes) -> FFTLanes { FFTLanes(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w) }
}
#else
/// Four floats in one SIMD register.
typealias FFTLanes = SIMD4<Float>
#endif

/// Four complex values: real parts, imaginary parts.
typealias ComplexLanes = (re: FFTLanes, im: FFTLanes)

extension UnsafeMutablePointer where Pointee == Float {
    /// The floats as lanes: lane index i covers floats 4i ..< 4i + 4. Only for storage on a 16-byte boundary
    /// (`zeroed(_:)`) at an offset of whole lanes.
    @_transparent var lanes: UnsafeMutablePointer<FFTLanes> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: FFTLanes.self)
    }
}

extension FFTLanes {
    /// p[0], p[1], p[2], p[3], at any alignment.
    @_transparent init(loading p: UnsafePointer<Float>) {
        self = UnsafeRawPointer(p).loadUnaligned(as: FFTLanes.self)
    }

    /// base[i], base[i − 1], base[i − 2], base[i − 3], where index `wrap` reads base[0].
    @_transparent init(reversedFrom base: UnsafePointer<Float>, at i: Int, wrapping wrap: Int) {
        self.init(base[i == wrap ? 0 : i], base[i &- 1], base[i &- 2], base[i &- 3])
    }

    @_transparent func store(into p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: self, as: FFTLanes.self)
    }
}

/// (re, im) · (c + i·s).
@_transparent func rotated(_ value: ComplexLanes, cos c: FFTLanes, sin s: FFTLanes) -> ComplexLanes {
    (value.re * c - value.im * s, value.re * s + value.im * c)
}
