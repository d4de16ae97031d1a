import CSRTP

/// An SRTP crypto suite as SDES names it (RFC 4568 §6.2, RFC 7714 §14.2), with its master key and salt
/// lengths and how to set libsrtp's policy for it.
public enum SRTPSuite: String, CaseIterable, Sendable, Hashable {
    /// AES-128 in counter mode, HMAC-SHA1 with an 80-bit tag (RFC 3711's default).
    case aesCM128HMACSHA1_80 = "AES_CM_128_HMAC_SHA1_80"
    /// AES-128 in Galois/counter mode with a 16-byte tag (RFC 7714).
    case aeadAES128GCM = "AEAD_AES_128_GCM"

    /// Master key plus master salt, in bytes: 16 + 14 for AES-CM, 16 + 12 for GCM.
    public var masterKeyAndSaltByteCount: Int {
        switch self {
        case .aesCM128HMACSHA1_80: 30
        case .aeadAES128GCM: 28
        }
    }

    /// Sets SRTP and SRTCP policies for this suite.
    func setPolicies(rtp: inout srtp_crypto_policy_t, rtcp: inout srtp_crypto_policy_t) {
        switch self {
        case .aesCM128HMACSHA1_80:
            srtp_crypto_policy_set_rtp_default(&rtp)
            srtp_crypto_policy_set_rtcp_default(&rtcp)
        case .aeadAES128GCM:
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&rtp)
            srtp_crypto_policy_set_aes_gcm_128_16_auth(&rtcp)
        }
    }

    /// The suites this libsrtp2 can run: GCM needs libsrtp2 built with a crypto library that offers it
    /// (Debian's uses NSS). Found by creating a context once per suite. Not real-time safe.
    public static let available: [SRTPSuite] = allCases.filter { suite in
        (try? SRTPContext(direction: .outbound, key: .init(checkedSuite: suite, bytes: [UInt8](repeating: 1, count: suite.masterKeyAndSaltByteCount)))) != nil
    }
}
