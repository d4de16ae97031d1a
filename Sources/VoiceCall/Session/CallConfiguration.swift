import VoiceIO

/// Everything a `CallSession` is told at creation: where the far end is, the voice format the audio side
/// speaks, the Opus settings and the timing of the network thread.
public struct CallConfiguration: Sendable {
    /// The only address and port whose datagrams are accepted, and where ours go.
    public var remote: SocketAddress
    /// Frames per second of `sendCaptured` and `renderReceived` (one of `StreamFormat.voiceRates`). A rate
    /// Opus does not take (11025) is converted to the next one it does (`codecRate`).
    public var voiceRate = 16000
    public var frameDurationMilliseconds = 20
    public var bitsPerSecond = 24000
    /// Opus encoder complexity (0–10): 9, Opus's own choice for speech quality; 5 costs about half as much
    /// (see `scripts/bench` for both), for a small loss in quality.
    public var opusComplexity = 9
    public var inbandFEC = false
    public var dtx = false
    /// The payload type we send with (the one the remote's SDP asks for).
    public var payloadType = RTPHeader.defaultPayloadType
    /// The payload type accepted from the remote (the one our SDP names, or the remote's own when it sends
    /// with the type it described, as standard tools do).
    public var receivedPayloadType = RTPHeader.defaultPayloadType
    /// SRTP and SRTCP keys (RFC 3711): nil for plain RTP. Every datagram is then protected before it is sent
    /// and must authenticate (and not be a replay) before anything parses it.
    public var srtp: SRTPKeys?
    /// Mean time between RTCP reports; each interval is drawn from 0.5–1.5 times this (RFC 3550 §6.3.1).
    public var rtcpIntervalSeconds = 2.5
    /// A new SSRC from the remote is taken as a sender restart only after the current one has been silent
    /// this long; before that its packets are dropped as foreign.
    public var sourceRestartSilenceSeconds = 2.0
    /// Longest sleep of the network thread when nothing is due (no captured voice coming, no datagram); bounds
    /// how long `stop` takes.
    public var idleWaitMilliseconds = 50
    /// Captured voice the audio thread may queue for the encoder, in milliseconds.
    public var captureCapacityMilliseconds = 500
    /// The jitter buffer's target before any jitter is measured: one 20 ms packet and half a 20 ms device
    /// period of margin; the measured jitter takes over after two packets.
    public var jitterInitialDelayMilliseconds = 30
    public var jitterMaxDelayMilliseconds = 400
    /// RTCP SDES CNAME.
    public var cname = "voicepeer"

    public init(remote: SocketAddress) {
        self.remote = remote
    }

    /// The rate the Opus encoder and decoder run at: `voiceRate`, or the next rate Opus takes.
    public var codecRate: Int { OpusFormat.nearestSupportedRate(atLeast: voiceRate) }
}
