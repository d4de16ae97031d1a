/// What an FFT butterfly needs from its numbers, so each radix's butterfly is written once and runs either on one
/// float (the scalar tail of a pass) or on four neighbouring butterflies at once (`SIMD4<Float>`, loaded and stored
/// with `FloatLanes`' helpers). Everything here is real-time safe.
protocol ButterflyLane {
    /// How many butterflies one value carries.
    static var width: Int { get }
    init(broadcasting value: Float)
    static func load(_ pointer: UnsafePointer<Float>, at offset: Int) -> Self
    /// The `width` floats ending at `offset`, last first (the mirrored bins h − k of a real spectrum).
    static func loadReversed(_ pointer: UnsafePointer<Float>, endingAt offset: Int) -> Self
    func store(into pointer: UnsafeMutablePointer<Float>, at offset: Int)
    static func + (lhs: Self, rhs: Self) -> Self
    static func - (lhs: Self, rhs: Self) -> Self
    static func * (lhs: Self, rhs: Self) -> Self
}

extension Float: ButterflyLane {
    @inline(__always) static var width: Int { 1 }
    @inline(__always) init(broadcasting value: Float) { self = value }
    @inline(__always) static func load(_ pointer: UnsafePointer<Float>, at offset: Int) -> Float {
        pointer[offset]
    }
    @inline(__always) static func loadReversed(_ pointer: UnsafePointer<Float>, endingAt offset: Int) -> Float {
        pointer[offset]
    }
    @inline(__always) func store(into pointer: UnsafeMutablePointer<Float>, at offset: Int) { pointer[offset] = self }
}

extension SIMD4: ButterflyLane where Scalar == Float {
    @inline(__always) static var width: Int { 4 }
    @inline(__always) init(broadcasting value: Float) { self.init(repeating: value) }
    @inline(__always) static func load(_ pointer: UnsafePointer<Float>, at offset: Int) -> SIMD4<Float> {
        pointer.lanes(at: offset)
    }
    @inline(__always) static func loadReversed(_ pointer: UnsafePointer<Float>, endingAt offset: Int) -> SIMD4<Float> {
        let lanes = pointer.lanes(at: offset &- 3)
        return SIMD4(lanes[3], lanes[2], lanes[1], lanes[0])
    }
    @inline(__always) func store(into pointer: UnsafeMutablePointer<Float>, at offset: Int) {
        pointer.storeLanes(self, at: offset)
    }
}

/// A complex value (or `Lane.width` of them) held as real and imaginary parts, as the split buffers keep them.
struct SplitComplex<Lane: ButterflyLane> {
    var re: Lane
    var im: Lane

    @inline(__always) init(_ re: Lane, _ im: Lane) { self.re = re; self.im = im }

    @inline(__always) init(_ real: UnsafeMutablePointer<Float>, _ imaginary: UnsafeMutablePointer<Float>, at offset: Int) {
        re = Lane.load(real, at: offset)
        im = Lane.load(imaginary, at: offset)
    }

    @inline(__always) func store(_ real: UnsafeMutablePointer<Float>, _ imaginary: UnsafeMutablePointer<Float>, at offset: Int) {
        re.store(into: real, at: offset)
        im.store(into: imaginary, at: offset)
    }

    @inline(__always) static func + (lhs: Self, rhs: Self) -> Self { Self(lhs.re + rhs.re, lhs.im + rhs.im) }
    @inline(__always) static func - (lhs: Self, rhs: Self) -> Self { Self(lhs.re - rhs.re, lhs.im - rhs.im) }

    /// This value times `c + i·s`.
    @inline(__always) func rotated(cos c: Lane, sin s: Lane) -> Self { Self(re * c - im * s, re * s + im * c) }

    /// Each part times the real `factor`.
    @inline(__always) func scaled(_ factor: Lane) -> Self { Self(re * factor, im * factor) }
}
