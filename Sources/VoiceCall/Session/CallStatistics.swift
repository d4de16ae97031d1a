/// What a call session has sent, received and dropped, as last published by its network thread.
public struct CallStatistics: Sendable, Hashable, Codable {
    public var localSSRC: UInt32 = 0
    /// The remote stream being played, once latched.
    public var remoteSSRC: UInt32?
    public var packetsSent = 0
    /// Payload bytes sent.
    public var payloadBytesSent = 0
    /// Frames not sent because DTX found them silent.
    public var framesSkippedByDTX = 0
    /// sendto failures (the datagram was lost).
    public var sendErrors = 0
    /// poll/recvmsg failures.
    public var receiveErrors = 0
    /// Datagrams the kernel dropped before the call read them (`UDPSocket.kernelDropCount`): the socket's receive
    /// buffer was full, the network thread behind a flood or an overloaded machine. Whose they were is unknown: the
    /// remote's show as lost too.
    public var droppedByKernel = 0
    /// RTP packets accepted from the remote and handed to the jitter buffer.
    public var packetsReceived = 0
    /// Expected minus received for the current remote stream (RFC 3550 A.3; duplicates make it smaller).
    public var packetsLost: Int64 = 0
    /// Interarrival jitter of the remote stream (RFC 3550 A.8), in milliseconds.
    public var jitterMilliseconds = 0.0
    /// Loss of our stream as the remote's last report says, in percent.
    public var remoteLossPercent: Double?
    /// Jitter of our stream as the remote's last report says, in milliseconds.
    public var remoteJitterMilliseconds: Double?
    /// Round-trip time from the remote's last report on our sender reports.
    public var roundTripMilliseconds: Double?
    public var rtcpSent = 0
    public var rtcpReceived = 0
    /// New SSRCs latched from the remote after the old one fell silent (a sender restart, or a spoofer that
    /// outlasted an outage: the address alone cannot tell them apart).
    public var sourceTakeovers = 0
    /// Captured frames dropped because the encoder fell behind (the capture queue was full).
    public var captureOverflowFrames = 0
    /// The playout side, as last reported by the audio thread.
    public var jitterBuffer = JitterBufferStatistics()
    public var dropped: [CallDropReason: Int] = [:]

    public init() {}

    /// All datagrams dropped, whatever the reason.
    public var droppedTotal: Int { dropped.values.reduce(0, +) }

    /// Count for one reason (0 when none).
    public func dropped(_ reason: CallDropReason) -> Int { dropped[reason, default: 0] }
}
