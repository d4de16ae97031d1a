/// The fields of an RTP fixed header (RFC 3550 §5.1) that a voice stream uses. We send no CSRCs, no header
/// extension and no padding; the parser skips them when others send them.
public struct RTPHeader: Sendable, Hashable {
    /// Bytes of the fixed header.
    public static let fixedByteCount = 12
    /// RFC 7587 uses a dynamic payload type; 111 is the common choice.
    public static let defaultPayloadType: UInt8 = 111

    /// Set on the first packet of a talkspurt (after DTX silence or at the start).
    public var marker: Bool
    /// 0 ... 127.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    /// Sampling instant of the first sample, in ticks of the payload's RTP clock (48 kHz for Opus).
    public var timestamp: UInt32
    /// Synchronisation source: identifies the sender's stream.
    public var ssrc: UInt32

    public init(marker: Bool = false, payloadType: UInt8 = defaultPayloadType, sequenceNumber: UInt16,
                timestamp: UInt32, ssrc: UInt32) {
        self.marker = marker
        self.payloadType = payloadType & 0x7f
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
    }

    /// Writes the 12-byte header at the start of `buffer`; returns the bytes written, or nil when the buffer
    /// is too small. Real-time safe.
    public func write(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard buffer.count >= Self.fixedByteCount else { return nil }
        buffer.store(UInt8(0x80), at: 0)
        buffer.store((marker ? 0x80 : 0) | (payloadType & 0x7f), at: 1)
        buffer.store(sequenceNumber, at: 2)
        buffer.store(timestamp, at: 4)
        buffer.store(ssrc, at: 8)
        return Self.fixedByteCount
    }
}
