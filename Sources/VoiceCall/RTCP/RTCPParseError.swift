/// Why a datagram was not accepted as a compound RTCP packet. Each case is a counter key.
public enum RTCPParseError: Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Fewer than 4 bytes left where a packet header should start.
    case truncatedHeader
    case unsupportedVersion
    /// A packet's length field runs past the datagram.
    case lengthExceedsDatagram
    /// A report's count of blocks needs more bytes than its length field gives.
    case reportCountExceedsLength
    /// The padding count is zero or longer than the packet.
    case invalidPadding
    /// The compound packet holds no sender or receiver report.
    case noReport

    public var description: String {
        switch self {
        case .truncatedHeader: "shorter than an RTCP header"
        case .unsupportedVersion: "RTCP version is not 2"
        case .lengthExceedsDatagram: "RTCP length exceeds the datagram"
        case .reportCountExceedsLength: "report count exceeds the RTCP length"
        case .invalidPadding: "RTCP padding count is zero or exceeds the packet"
        case .noReport: "no sender or receiver report"
        }
    }
}
