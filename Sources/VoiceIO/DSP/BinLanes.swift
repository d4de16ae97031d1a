/// Four frequency bins at a time, for the residual echo suppressor's per-bin loops: spectra are stored as plain
/// floats (`laneBinCount` of them, whole lanes) and read and written four bins at once, with lane masks for the
/// per-bin decisions. All functions are real-time safe.
typealias BinLanes = SIMD4<Float>
/// One decision per bin of a `BinLanes`.
typealias BinMask = SIMDMask<SIMD4<Int32>>

/// Bins k … k + 3 of `bins`, read unaligned.
@inline(__always) func lanes(_ bins: UnsafeMutablePointer<Float>, _ k: Int) -> BinLanes {
    UnsafeRawPointer(bins + k).loadUnaligned(as: BinLanes.self)
}

/// Writes `value` to bins k … k + 3 of `bins`, unaligned.
@inline(__always) func store(_ value: BinLanes, _ bins: UnsafeMutablePointer<Float>, _ k: Int) {
    UnsafeMutableRawPointer(bins + k).storeBytes(of: value, as: BinLanes.self)
}

/// Lane by lane what `Swift.max(x, y)` gives (y ≥ x ? y : x), so the vector loops compute the scalar code's bits.
@inline(__always) func maximum(_ x: BinLanes, _ y: BinLanes) -> BinLanes { x.replacing(with: y, where: y .>= x) }

/// Lane by lane what `Swift.min(x, y)` gives (y < x ? y : x).
@inline(__always) func minimum(_ x: BinLanes, _ y: BinLanes) -> BinLanes { x.replacing(with: y, where: y .< x) }
