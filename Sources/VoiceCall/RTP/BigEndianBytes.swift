/// Network-order (big-endian) field access on raw bytes, for the RTP and RTCP codecs. Callers check bounds
/// before each access; these only do the byte order. Real-time safe.
extension UnsafeRawBufferPointer {
    @inline(__always) func uint8(at offset: Int) -> UInt8 { self[offset] }
    @inline(__always) func uint16(at offset: Int) -> UInt16 {
        UInt16(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) func uint32(at offset: Int) -> UInt32 {
        UInt32(bigEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always) func store(_ value: UInt8, at offset: Int) { self[offset] = value }
    @inline(__always) func store(_ value: UInt16, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) func store(_ value: UInt32, at offset: Int) {
        storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt32.self)
    }
}
