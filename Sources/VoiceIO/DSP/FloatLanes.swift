/// Four consecutive floats as one `SIMD4<Float>`, read and written unaligned: the loads and stores of the per-bin
/// and butterfly loops that run four lanes at a time. Real-time safe.
extension UnsafePointer where Pointee == Float {
    @inline(__always) func lanes(at offset: Int) -> SIMD4<Float> {
        UnsafeRawPointer(self + offset).loadUnaligned(as: SIMD4<Float>.self)
    }
}

extension UnsafeMutablePointer where Pointee == Float {
    @inline(__always) func lanes(at offset: Int) -> SIMD4<Float> {
        UnsafeRawPointer(self + offset).loadUnaligned(as: SIMD4<Float>.self)
    }

    @inline(__always) func storeLanes(_ value: SIMD4<Float>, at offset: Int) {
        UnsafeMutableRawPointer(self + offset).storeBytes(of: value, as: SIMD4<Float>.self)
    }
}
