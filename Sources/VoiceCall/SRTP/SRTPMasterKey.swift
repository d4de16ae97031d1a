import CVoiceShims
import Glibc

/// An SRTP master key and salt for one suite, as SDES carries it (`inline:` base64, RFC 4568 §6.1). Its
/// `description` never shows the bytes: keys stay out of logs, summaries and reports.
public struct SRTPMasterKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
                             CustomReflectable {
    public let suite: SRTPSuite
    /// Master key followed by master salt (`suite.masterKeyAndSaltByteCount` bytes).
    let bytes: [UInt8]

    /// A fresh key from the system's CSPRNG (getrandom(2)). Not real-time safe.
    public static func random(suite: SRTPSuite) -> SRTPMasterKey {
        var bytes = [UInt8](repeating: 0, count: suite.masterKeyAndSaltByteCount)
        let status = bytes.withUnsafeMutableBytes { voice_random_bytes($0.baseAddress, UInt($0.count)) }
        precondition(status == 0, "getrandom failed: \(String(cString: strerror(errno)))")
        return SRTPMasterKey(checkedSuite: suite, bytes: bytes)
    }

    /// `bytes` must be `suite.masterKeyAndSaltByteCount` long.
    init(checkedSuite: SRTPSuite, bytes: [UInt8]) {
        suite = checkedSuite
        self.bytes = bytes
    }

    /// The key and salt in base64, for `inline:` (and for tools that take the same text, like ffmpeg's
    /// `-srtp_out_params`).
    public var base64: String { Base64.encode(bytes) }

    /// From `inline:` base64 text.
    public init(suite: SRTPSuite, base64 text: Substring) throws(SDPError) {
        guard let bytes = Base64.decode(text) else { throw SDPError("the key is not base64") }
        guard bytes.count == suite.masterKeyAndSaltByteCount else {
            throw SDPError("a \(suite.rawValue) key must be \(suite.masterKeyAndSaltByteCount) bytes of key and salt, not \(bytes.count)")
        }
        self.init(checkedSuite: suite, bytes: bytes)
    }

    public var description: String { "\(suite.rawValue) key (redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["suite": suite]) }
}
