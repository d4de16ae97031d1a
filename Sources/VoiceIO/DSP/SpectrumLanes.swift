/// Four floats that the DSP's per-bin and butterfly loops work on at once (the FFTs, the canceller's filter and
/// adaptation, the delay estimator's cross-spectrum). Real-time safe.
#if DEBUG
/// Four floats lane by lane, in an unoptimised build (ours, or an app's debug build that includes the library):
/// there `SIMD4<Float>`'s operators are generic calls (about 70 ns each), which made the echo canceller's FFT
/// 11 times slower than scalar code and too slow for real-time pace. These transparent operators inline even
/// unoptimised. The same IEEE operations in the same order as `SIMD4<Float>`'s, so both builds compute the same
/// bits.
struct SpectrumLanes {
    var x: Float, y: Float, z: Float, w: Float
    @_transparent init(_ x: Float, _ y: Float, _ z: Float, _ w: Float) {
        self.x = x; self.y = y; self.z = z; self.w = w
    }
    @_transparent init(repeating value: Float) { self.init(value, value, value, value) }
    @_transparent static func + (a: Self, b: Self) -> Self { Self(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w) }
    @_transparent static func - (a: Self, b: Self) -> Self { Self(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w) }
    @_transparent static func * (a: Self, b: Self) -> Self { Self(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w) }
    @_transparent static func * (a: Float, b: Self) -> Self { Self(a * b.x, a * b.y, a * b.z, a * b.w) }
    @_transparent static prefix func - (a: Self) -> Self { Self(-a.x, -a.y, -a.z, -a.w) }
}
#else
/// Four floats in one SIMD register.
typealias SpectrumLanes = SIMD4<Float>
#endif

/// Four complex values: real parts, imaginary parts.
typealias ComplexLanes = (re: SpectrumLanes, im: SpectrumLanes)

extension UnsafeMutablePointer where Pointee == Float {
    /// The floats as aligned lanes: lane index i covers floats 4i ..< 4i + 4. Only for storage on a 16-byte
    /// boundary (`zeroed(_:)`) at an offset of whole lanes; `SpectrumLanes(loading:)` reads at any float.
    @_transparent var alignedLanes: UnsafeMutablePointer<SpectrumLanes> {
        UnsafeMutableRawPointer(self).assumingMemoryBound(to: SpectrumLanes.self)
    }
}

extension SpectrumLanes {
    /// p[0], p[1], p[2], p[3], at any alignment.
    @_transparent init(loading p: UnsafePointer<Float>) {
        self = UnsafeRawPointer(p).loadUnaligned(as: SpectrumLanes.self)
    }

    /// base[i], base[i − 1], base[i − 2], base[i − 3], where index `wrap` reads base[0].
    @_transparent init(reversedFrom base: UnsafePointer<Float>, at i: Int, wrapping wrap: Int) {
        self.init(base[i == wrap ? 0 : i], base[i &- 1], base[i &- 2], base[i &- 3])
    }

    @_transparent func store(into p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: self, as: SpectrumLanes.self)
    }

    /// The lanes in reverse order: w, z, y, x.
    @_transparent var reversed: SpectrumLanes { SpectrumLanes(w, z, y, x) }
}

/// (re, im) · (c + i·s).
@_transparent func rotated(_ value: ComplexLanes, cos c: SpectrumLanes, sin s: SpectrumLanes) -> ComplexLanes {
    (value.re * c - value.im * s, value.re * s + value.im * c)
}
