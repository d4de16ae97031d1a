/// The two master keys of an SRTP call (SDES, RFC 4568): each peer's SDP carries the key it sends with, so we
/// protect with ours and unprotect with the remote's. Both keys use one suite. Descriptions hide the keys.
public struct SRTPKeys: Sendable, Hashable, CustomStringConvertible {
    public var sending: SRTPMasterKey
    public var receiving: SRTPMasterKey

    public init(sending: SRTPMasterKey, receiving: SRTPMasterKey) {
        self.sending = sending
        self.receiving = receiving
    }

    public var suite: SRTPSuite { sending.suite }
    public var description: String { "SRTP \(suite.rawValue) (keys redacted)" }

    /// Suites in the order both peers prefer them when each offers several: the same rule on both sides picks
    /// the same suite without a negotiation round.
    static let preference: [SRTPSuite] = [.aeadAES128GCM, .aesCM128HMACSHA1_80]

    /// The keys for a call between `local` (ours) and `remote` offers: nil when neither offers SRTP. Refused
    /// when only one side has a key, or when they share no suite this libsrtp2 runs.
    public static func agree(local: [SDPCrypto], remote: [SDPCrypto]) throws(SDPError) -> SRTPKeys? {
        switch (local.isEmpty, remote.isEmpty) {
        case (true, true): return nil
        case (false, true): throw SDPError("this peer's SDP has an SRTP key but the remote's has none: both use SRTP (RTP/SAVP with a=crypto) or neither")
        case (true, false): throw SDPError("the remote's SDP has an SRTP key but this peer has none: give this peer's SDP with a key (voicepeer sdp --srtp), or use plain RTP on both sides")
        case (false, false): break
        }
        for suite in preference where SRTPSuite.available.contains(suite) {
            if let ours = local.first(where: { $0.key.suite == suite }),
               let theirs = remote.first(where: { $0.key.suite == suite }) {
                return SRTPKeys(sending: ours.key, receiving: theirs.key)
            }
        }
        throw SDPError("the two SDPs share no SRTP suite this build runs (\(SRTPSuite.available.map(\.rawValue).joined(separator: ", ")))")
    }
}
