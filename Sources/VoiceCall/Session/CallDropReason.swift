/// Why the network thread dropped a datagram instead of playing or using it. Each case is a counter key.
public enum CallDropReason: Hashable, Sendable, CustomStringConvertible {
    /// Not from the configured remote address and port.
    case wrongSource
    /// From the remote, but from an SSRC other than the one latched (and that one is not silent).
    case foreignSSRC
    /// From the remote, from an SSRC not yet latched: it has not sent enough well-formed, well-ordered packets.
    case sourceOnProbation
    /// Longer than the receive buffer.
    case oversized
    /// Too short to tell RTP from RTCP.
    case runt
    case malformedRTP(RTPParseError)
    case malformedRTCP(RTCPParseError)
    /// SRTP or SRTCP refused it: authentication failed, a replay, or another libsrtp status.
    case srtp(SRTPError)
    /// The queue to the audio thread was full (the audio side is not rendering).
    case queueFull

    public var description: String {
        switch self {
        case .wrongSource: "wrong source"
        case .foreignSSRC: "foreign SSRC"
        case .sourceOnProbation: "SSRC on probation"
        case .oversized: "oversized"
        case .runt: "runt"
        case .malformedRTP(let error): "RTP: \(error)"
        case .malformedRTCP(let error): "RTCP: \(error)"
        case .srtp(let error): "SRTP: \(error)"
        case .queueFull: "queue full"
        }
    }
}

extension CallDropReason: CaseIterable, CodingKeyRepresentable, Codable {
    public static var allCases: [CallDropReason] {
        [.wrongSource, .foreignSSRC, .sourceOnProbation, .oversized, .runt, .queueFull]
            + RTPParseError.allCases.map { .malformedRTP($0) } + RTCPParseError.allCases.map { .malformedRTCP($0) }
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// A reason's key in a report: its description.
    public var codingKey: any CodingKey { Key(stringValue: description) }

    public init?<Other: CodingKey>(codingKey: Other) {
        guard let reason = Self.allCases.first(where: { $0.description == codingKey.stringValue }) else { return nil }
        self = reason
    }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let reason = Self(codingKey: Key(stringValue: text)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown drop reason \(text)"))
        }
        self = reason
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
