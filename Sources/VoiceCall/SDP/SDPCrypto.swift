/// One `a=crypto` attribute (RFC 4568 SDES): a tag, a suite and the master key the describing peer sends
/// with. Its description hides the key.
public struct SDPCrypto: Sendable, Hashable, CustomStringConvertible {
    /// 1–999999999.
    public var tag: Int
    public var key: SRTPMasterKey

    public init(tag: Int, key: SRTPMasterKey) {
        self.tag = tag
        self.key = key
    }

    /// "a=crypto:" value: "1 AES_CM_128_HMAC_SHA1_80 inline:KEY".
    var attributeValue: String { "\(tag) \(key.suite.rawValue) inline:\(key.base64)" }

    public var description: String { "crypto \(tag) \(key)" }

    /// Reads "TAG SUITE inline:KEY[|LIFETIME][|MKI:LENGTH] [SESSION-PARAMS]"; nil for a suite this peer does
    /// not know (an offer may list several). A lifetime is accepted; an MKI is refused (libsrtp would need
    /// every packet to carry it, which the peers here do not).
    static func parse(_ value: Substring) throws(SDPError) -> SDPCrypto? {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 3, fields[0].count <= 9, let tag = Int(fields[0]), tag >= 1 else {
            throw SDPError("a=crypto needs TAG SUITE inline:KEY (RFC 4568)")
        }
        guard let suite = SRTPSuite(rawValue: String(fields[1])) else { return nil }
        guard fields.count == 3 else { throw SDPError("a=crypto: session parameters are not supported") }
        guard fields[2].hasPrefix("inline:") else { throw SDPError("a=crypto: the key must be inline:BASE64") }
        let parts = fields[2].dropFirst("inline:".count).split(separator: "|", omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw SDPError("a=crypto: an MKI is not supported") }
        if parts.count == 2 && parts[1].contains(":") { throw SDPError("a=crypto: an MKI is not supported") }
        return SDPCrypto(tag: tag, key: try SRTPMasterKey(suite: suite, base64: parts[0]))
    }
}
