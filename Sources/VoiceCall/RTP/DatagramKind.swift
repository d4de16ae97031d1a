/// What a datagram arriving on the shared RTP/RTCP port is (RFC 5761 §4): the second byte of an RTCP packet
/// is its packet type, 192–223 in practice (SR 200 … APP 204, feedback 205/206); in RTP that byte is the
/// marker bit and payload type, and payload types 64–95 that would collide are not used for RTP.
public enum DatagramKind: Sendable, Hashable {
    case rtp
    case rtcp
    /// Too short to say.
    case runt

    /// Classifies from the first two bytes only; the matching parser does the checking. Real-time safe.
    public init(classifying datagram: UnsafeRawBufferPointer) {
        guard datagram.count >= 2 else { self = .runt; return }
        self = (192...223).contains(datagram[1]) ? .rtcp : .rtp
    }
}
