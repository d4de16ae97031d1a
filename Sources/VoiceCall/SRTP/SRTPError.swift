import CSRTP

/// A libsrtp2 failure, carrying the library's own status (`srtp_err_status_t`) and its name. Typed and
/// allocation-free, so the network thread can throw and count it per packet.
public struct SRTPError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The `srtp_err_status_t` value.
    public let status: UInt32

    init(_ status: srtp_err_status_t) { self.status = status.rawValue }

    public static let authenticationFailed = SRTPError(srtp_err_status_auth_fail)
    /// The packet index was seen before (a replay).
    public static let replayed = SRTPError(srtp_err_status_replay_fail)
    /// The packet index is older than the replay window.
    public static let tooOld = SRTPError(srtp_err_status_replay_old)
    public static let badParameter = SRTPError(srtp_err_status_bad_param)

    /// libsrtp's name for the status, as in `srtp.h`.
    public var name: String {
        let names = [
            "ok", "fail", "bad_param", "alloc_fail", "dealloc_fail", "init_fail", "terminus", "auth_fail",
            "cipher_fail", "replay_fail", "replay_old", "algo_fail", "no_such_op", "no_ctx", "cant_check",
            "key_expired", "socket_err", "signal_err", "nonce_bad", "read_fail", "write_fail", "parse_err",
            "encode_err", "semaphore_err", "pfkey_err", "bad_mki", "pkt_idx_old", "pkt_idx_adv",
        ]
        return status < names.count ? "srtp_err_status_\(names[Int(status)])" : "srtp_err_status \(status)"
    }

    public var description: String {
        switch self {
        case .authenticationFailed: "authentication failed (\(name))"
        case .replayed: "replayed (\(name))"
        case .tooOld: "older than the replay window (\(name))"
        default: name
        }
    }

    /// Throws unless `status` is `srtp_err_status_ok`. Real-time safe.
    @inline(__always)
    static func check(_ status: srtp_err_status_t) throws(SRTPError) {
        guard status == srtp_err_status_ok else { throw SRTPError(status) }
    }
}
