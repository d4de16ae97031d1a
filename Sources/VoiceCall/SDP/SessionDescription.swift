/// An SDP (RFC 4566) describing one Opus RTP stream (RFC 7587), so standard tools (ffmpeg, GStreamer's
/// sdpdemux) can receive it: where the packets go (`c=` and `m=`), the payload type and how to decode it.
///
/// RFC 7587 always signals `opus/48000/2`, even for mono; `stereo=0` and `sprop-stereo=0` in `a=fmtp` say the
/// stream is mono. `maxplaybackrate`/`sprop-maxcapturerate` give the codec's internal rate.
///
/// With `crypto` the profile is RTP/SAVP and each key this peer may send with is an `a=crypto` line (RFC 4568):
/// the text then holds secrets, so write it to a file only its owner can read. `PeerDescription` reads it back.
public struct SessionDescription: Sendable, Hashable {
    /// Where the stream is sent (the receiving tool listens here).
    public var destination: SocketAddress
    /// This peer's address (the SDP origin).
    public var origin: SocketAddress
    public var payloadType: UInt8
    public var format: OpusFormat
    public var bitsPerSecond: Int
    public var inbandFEC: Bool
    public var dtx: Bool
    /// A number identifying the session (`o=` line).
    public var sessionID: UInt64
    /// SRTP suites and the keys this peer sends with; empty for plain RTP.
    public var crypto: [SDPCrypto]
    /// The SSRC of the stream, when it is known (a running call): `a=ssrc` (RFC 5576), which receivers that
    /// key SRTP per SSRC (GStreamer's srtpdec) need.
    public var ssrc: UInt32?

    public init(destination: SocketAddress, origin: SocketAddress, payloadType: UInt8 = RTPHeader.defaultPayloadType,
                format: OpusFormat, bitsPerSecond: Int, inbandFEC: Bool, dtx: Bool, sessionID: UInt64,
                crypto: [SDPCrypto] = [], ssrc: UInt32? = nil) {
        self.crypto = crypto
        self.ssrc = ssrc
        self.destination = destination
        self.origin = origin
        self.payloadType = payloadType
        self.format = format
        self.bitsPerSecond = bitsPerSecond
        self.inbandFEC = inbandFEC
        self.dtx = dtx
        self.sessionID = sessionID
    }

    /// The SDP text, lines ending in CRLF as RFC 4566 asks.
    public var text: String {
        let parameters = [
            "minptime=10", "ptime=\(format.frameDurationMilliseconds)", "useinbandfec=\(inbandFEC ? 1 : 0)",
            "usedtx=\(dtx ? 1 : 0)", "stereo=0", "sprop-stereo=0", "maxaveragebitrate=\(bitsPerSecond)",
            "maxplaybackrate=\(format.sampleRate)", "sprop-maxcapturerate=\(format.sampleRate)",
        ]
        let lines = [
            "v=0",
            "o=- \(sessionID) 1 \(Self.addressLine(origin))",
            "s=voicepeer",
            "c=\(Self.addressLine(destination))",
            "t=0 0",
            "m=audio \(destination.port) \(crypto.isEmpty ? "RTP/AVP" : "RTP/SAVP") \(payloadType)",
            "a=rtpmap:\(payloadType) opus/\(OpusFormat.rtpClockRate)/2",
            "a=fmtp:\(payloadType) \(parameters.joined(separator: ";"))",
            "a=ptime:\(format.frameDurationMilliseconds)",
            "a=rtcp-mux",
        ] + crypto.map { "a=crypto:\($0.attributeValue)" } + (ssrc.map { ["a=ssrc:\($0) cname:voicepeer"] } ?? [])
        return lines.map { $0 + "\r\n" }.joined()
    }

    /// "IN IP4 1.2.3.4" or "IN IP6 ::1".
    static func addressLine(_ address: SocketAddress) -> String {
        switch address.host {
        case .v4: "IN IP4 \(address.hostDescription)"
        case .v6: "IN IP6 \(address.hostDescription)"
        }
    }
}
