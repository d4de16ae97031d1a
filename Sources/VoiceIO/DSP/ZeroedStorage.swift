extension UnsafeMutablePointer where Pointee == Float {
    /// `count` floats allocated and set to zero: the preallocated storage of the DSP stages. Not real-time safe
    /// (allocates); the owner deallocates it.
    static func zeroed(_ count: Int) -> UnsafeMutablePointer<Float> {
        let pointer = UnsafeMutablePointer<Float>.allocate(capacity: count)
        pointer.initialize(repeating: 0, count: count)
        return pointer
    }
}
