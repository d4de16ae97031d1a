import CSRTP

/// One libsrtp2 session (`srtp_t`) for one direction of a call: it protects what we send (`.outbound`) or
/// authenticates, replay-checks and decrypts what the remote sends (`.inbound`), for SRTP and SRTCP alike
/// (RFC 3711; RFC 7714 for GCM), for any SSRC under the one master key.
///
/// Replay protection is on for both: a window of `replayWindowPackets` packet indices, no repeated
/// transmission of an index. The work is in place, in the caller's buffer, which must have room for
/// `maximumTrailerByteCount` more bytes when protecting. Protecting and unprotecting allocate nothing once a
/// stream is known (libsrtp clones its per-SSRC state on the first authentic packet of an SSRC, never for a
/// forged one); owned by one thread (the network thread). Creating one is not real-time safe.
public final class SRTPContext {
    public enum Direction: Sendable { case outbound, inbound }

    /// Bytes SRTP or SRTCP may add to a packet (tag, SRTCP index; no MKI is used).
    public static let maximumTrailerByteCount = Int(SRTP_MAX_TRAILER_LEN) + 4
    public static let replayWindowPackets = 1024

    private let session: srtp_t
    public let suite: SRTPSuite

    /// libsrtp's one-time initialisation (its crypto kernel), done before the first context.
    private static let initialised: Result<Void, SRTPError> = Result { () throws(SRTPError) in try SRTPError.check(srtp_init()) }

    public init(direction: Direction, key: SRTPMasterKey) throws(SRTPError) {
        try Self.initialised.get()
        suite = key.suite
        var policy = srtp_policy_t()
        key.suite.setPolicies(rtp: &policy.rtp, rtcp: &policy.rtcp)
        policy.ssrc.type = direction == .outbound ? ssrc_any_outbound : ssrc_any_inbound
        policy.window_size = UInt(Self.replayWindowPackets)
        policy.allow_repeat_tx = 0
        var created: srtp_t?
        var keyBytes = key.bytes
        let status = keyBytes.withUnsafeMutableBufferPointer { bytes in
            policy.key = bytes.baseAddress
            return srtp_create(&created, &policy)
        }
        // libsrtp copied what it needs (the derived session keys); wipe our copy of the master key.
        keyBytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        try SRTPError.check(status)
        guard let created else { throw SRTPError(srtp_err_status_init_fail) }
        session = created
    }

    deinit { srtp_dealloc(session) }

    /// Protects the RTP packet in the first `byteCount` bytes of `buffer` in place; returns the SRTP length.
    /// Real-time safe after the first packet; `buffer` needs `maximumTrailerByteCount` spare bytes.
    public func protectRTP(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int) throws(SRTPError) -> Int {
        try transform(buffer, byteCount: byteCount, growing: true, srtp_protect)
    }

    /// Protects the RTCP compound packet in place (SRTCP); returns its length.
    public func protectRTCP(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int) throws(SRTPError) -> Int {
        try transform(buffer, byteCount: byteCount, growing: true, srtp_protect_rtcp)
    }

    /// Authenticates, replay-checks and decrypts the SRTP packet in place; returns the RTP length. Throws
    /// `authenticationFailed`, `replayed`, `tooOld` and the like; nothing is changed that the caller may use
    /// then. Real-time safe for a known SSRC.
    public func unprotectRTP(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int) throws(SRTPError) -> Int {
        try transform(buffer, byteCount: byteCount, growing: false, srtp_unprotect)
    }

    /// As `unprotectRTP`, for SRTCP.
    public func unprotectRTCP(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int) throws(SRTPError) -> Int {
        try transform(buffer, byteCount: byteCount, growing: false, srtp_unprotect_rtcp)
    }

    private func transform(_ buffer: UnsafeMutableRawBufferPointer, byteCount: Int, growing: Bool,
                           _ operation: (srtp_t?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int32>?) -> srtp_err_status_t)
        throws(SRTPError) -> Int {
        let room = growing ? Self.maximumTrailerByteCount : 0
        guard let base = buffer.baseAddress, byteCount >= 0, byteCount + room <= buffer.count else {
            throw SRTPError(srtp_err_status_bad_param)
        }
        var length = Int32(byteCount)
        try SRTPError.check(operation(session, base, &length))
        return Int(length)
    }
}
