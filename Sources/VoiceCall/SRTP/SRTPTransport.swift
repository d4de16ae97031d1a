/// The SRTP step of a call's network thread: protects each RTP packet and RTCP report before it is sent,
/// and authenticates, replay-checks and decrypts each datagram from the remote before anything parses it.
///
/// Owns the two `SRTPContext`s (ours to send, the remote's to receive) and a scratch buffer allocated in
/// `init`; `protect` and `unprotect` allocate nothing for a known SSRC. Owned by the network thread.
final class SRTPTransport {
    private let outbound: SRTPContext
    private let inbound: SRTPContext
    private let scratch: UnsafeMutableRawBufferPointer

    /// Largest datagram `protect` takes.
    static let maximumPlainByteCount = 2048

    init(keys: SRTPKeys) throws(SRTPError) {
        outbound = try SRTPContext(direction: .outbound, key: keys.sending)
        inbound = try SRTPContext(direction: .inbound, key: keys.receiving)
        scratch = .allocate(byteCount: Self.maximumPlainByteCount + SRTPContext.maximumTrailerByteCount, alignment: 8)
    }

    deinit { scratch.deallocate() }

    /// The protected form of `datagram` (RTP or RTCP, as `kind` says), valid until the next call.
    func protect(_ datagram: UnsafeRawBufferPointer, kind: DatagramKind) throws(SRTPError) -> UnsafeRawBufferPointer {
        guard datagram.count <= Self.maximumPlainByteCount, let source = datagram.baseAddress else {
            throw SRTPError.badParameter
        }
        scratch.baseAddress!.copyMemory(from: source, byteCount: datagram.count)
        let byteCount = kind == .rtcp ? try outbound.protectRTCP(scratch, byteCount: datagram.count)
            : try outbound.protectRTP(scratch, byteCount: datagram.count)
        return UnsafeRawBufferPointer(rebasing: scratch[..<byteCount])
    }

    /// Unprotects the datagram in the first `byteCount` bytes of `buffer` in place; returns the plain length.
    func unprotect(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int, kind: DatagramKind) throws(SRTPError) -> Int {
        kind == .rtcp ? try inbound.unprotectRTCP(buffer, byteCount: byteCount)
            : try inbound.unprotectRTP(buffer, byteCount: byteCount)
    }
}
