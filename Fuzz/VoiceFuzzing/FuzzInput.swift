/// Reads a fuzz input front to back as the values a structured target needs; past the end every read gives 0,
/// so any input is a complete script.
struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset >= bytes.count }

    mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16 { UInt16(byte()) << 8 | UInt16(byte()) }

    mutating func uint32() -> UInt32 { UInt32(uint16()) << 16 | UInt32(uint16()) }

    /// Up to `byteCount` next bytes, fewer at the end, as a view into the input.
    mutating func bytes(upTo byteCount: Int) -> UnsafeRawBufferPointer {
        let end = min(bytes.count, offset + byteCount)
        defer { offset = max(offset, end) }
        return UnsafeRawBufferPointer(rebasing: bytes[min(offset, end)..<end])
    }
}

extension UnsafeMutableBufferPointer<Float> {
    /// Whether every sample is finite (NaN marks one left unwritten). A plain loop: this runs per sample.
    var isAllFinite: Bool {
        for index in indices where !self[index].isFinite { return false }
        return true
    }
}
