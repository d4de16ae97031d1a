/// An RTP packet as a header and a view of its payload inside a datagram buffer owned by the caller.
///
/// The payload is not copied: it is valid only as long as the buffer it was parsed from. Parsing and
/// serialising are real-time safe.
public struct RTPPacket {
    public var header: RTPHeader
    public var payload: UnsafeRawBufferPointer

    public init(header: RTPHeader, payload: UnsafeRawBufferPointer) {
        self.header = header
        self.payload = payload
    }

    /// Writes header then payload into `buffer`; returns the datagram's byte count, or nil when it does not fit.
    public func write(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let total = RTPHeader.fixedByteCount + payload.count
        guard buffer.count >= total, let headerBytes = header.write(into: buffer) else { return nil }
        if !payload.isEmpty { UnsafeMutableRawBufferPointer(rebasing: buffer[headerBytes..<total]).copyMemory(from: payload) }
        return total
    }

    /// Parses untrusted bytes. Every length field is checked against `datagram.count` before it is used;
    /// anything malformed throws its reason. CSRCs and the header extension are skipped, padding removed.
    /// With `expectedPayloadType` set, other payload types are refused.
    public static func parse(_ datagram: UnsafeRawBufferPointer, expectedPayloadType: UInt8? = nil) throws(RTPParseError) -> RTPPacket {
        guard datagram.count >= RTPHeader.fixedByteCount else { throw .truncatedHeader }
        let first = datagram.uint8(at: 0)
        guard first >> 6 == 2 else { throw .unsupportedVersion }
        let hasPadding = first & 0x20 != 0
        let hasExtension = first & 0x10 != 0
        let csrcCount = Int(first & 0x0f)
        let second = datagram.uint8(at: 1)
        let payloadType = second & 0x7f
        guard !(72...76).contains(payloadType) else { throw .payloadTypeConflictsWithRTCP }
        if let expectedPayloadType, payloadType != expectedPayloadType { throw .unexpectedPayloadType }

        var headerEnd = RTPHeader.fixedByteCount + 4 * csrcCount
        guard headerEnd <= datagram.count else { throw .truncatedCSRCList }
        if hasExtension {
            guard headerEnd + 4 <= datagram.count else { throw .truncatedExtension }
            let extensionWords = Int(datagram.uint16(at: headerEnd + 2))
            headerEnd += 4 + 4 * extensionWords
            guard headerEnd <= datagram.count else { throw .truncatedExtension }
        }
        var payloadEnd = datagram.count
        if hasPadding {
            let paddingBytes = Int(datagram.uint8(at: datagram.count - 1))
            guard paddingBytes > 0, headerEnd + paddingBytes <= datagram.count else { throw .invalidPadding }
            payloadEnd -= paddingBytes
        }
        guard payloadEnd > headerEnd else { throw .emptyPayload }
        let header = RTPHeader(marker: second & 0x80 != 0, payloadType: payloadType,
                               sequenceNumber: datagram.uint16(at: 2), timestamp: datagram.uint32(at: 4),
                               ssrc: datagram.uint32(at: 8))
        return RTPPacket(header: header, payload: UnsafeRawBufferPointer(rebasing: datagram[headerEnd..<payloadEnd]))
    }
}
