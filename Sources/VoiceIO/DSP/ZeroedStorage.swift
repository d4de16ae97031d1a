extension UnsafeMutablePointer where Pointee == Float {
    /// `count` floats allocated and set to zero: the preallocated storage of the DSP stages, on a 16-byte boundary
    /// so that whole SIMD4 lanes can be read from it aligned. Not real-time safe (allocates); the owner deallocates
    /// it.
    static func zeroed(_ count: Int) -> UnsafeMutablePointer<Float> {
        let raw = UnsafeMutableRawPointer.allocate(byteCount: count * MemoryLayout<Float>.stride,
                                                   alignment: MemoryLayout<SIMD4<Float>>.alignment)
        let pointer = raw.bindMemory(to: Float.self, capacity: count)
        pointer.initialize(repeating: 0, count: count)
        return pointer
    }
}
