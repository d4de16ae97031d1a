/// Why a datagram was not accepted as an RTP packet. Each case is a counter key for the receiver's stats.
public enum RTPParseError: Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Shorter than the 12-byte fixed header.
    case truncatedHeader
    /// The version field is not 2.
    case unsupportedVersion
    /// The CSRC count says more identifiers than the datagram holds.
    case truncatedCSRCList
    /// The extension header, or the length it declares, runs past the datagram.
    case truncatedExtension
    /// The padding count is zero or longer than what follows the header.
    case invalidPadding
    /// Payload type 72–76: with the marker bit these are RTCP packet types (RFC 5761 §4), not RTP.
    case payloadTypeConflictsWithRTCP
    /// Not the payload type this stream was configured with.
    case unexpectedPayloadType
    /// Nothing after the header and padding.
    case emptyPayload

    public var description: String {
        switch self {
        case .truncatedHeader: "shorter than the 12-byte RTP header"
        case .unsupportedVersion: "RTP version is not 2"
        case .truncatedCSRCList: "CSRC count exceeds the datagram"
        case .truncatedExtension: "header extension exceeds the datagram"
        case .invalidPadding: "padding count is zero or exceeds the datagram"
        case .payloadTypeConflictsWithRTCP: "payload type is in the RTCP range"
        case .unexpectedPayloadType: "unexpected payload type"
        case .emptyPayload: "empty payload"
        }
    }
}
