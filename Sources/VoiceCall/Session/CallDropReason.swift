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
