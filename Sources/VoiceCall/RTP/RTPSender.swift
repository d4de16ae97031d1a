/// The sending side of one RTP stream: SSRC, sequence numbers, 48 kHz timestamps, the marker bit at each
/// talkspurt start, and the packet and octet counts an RTCP sender report needs.
///
/// All methods are real-time safe. Owned by one thread (the one that packetises).
public struct RTPSender: Sendable {
    public let ssrc: UInt32
    public let payloadType: UInt8
    /// Packets sent since the start (RTCP sender info; wraps).
    public private(set) var packetCount: UInt32 = 0
    /// Payload bytes sent since the start (RTCP sender info; wraps).
    public private(set) var octetCount: UInt32 = 0
    /// Sequence number of the next packet.
    public private(set) var nextSequenceNumber: UInt16
    /// RTP timestamp of the next frame, sent or not.
    public private(set) var nextTimestamp: UInt32
    private var startsTalkspurt = true

    /// Random SSRC, initial sequence number and initial timestamp unless given (RFC 3550 §5.1). Not real-time safe
    /// only in that the system random generator may block at boot.
    public init(payloadType: UInt8 = RTPHeader.defaultPayloadType, ssrc: UInt32 = .random(in: .min ... .max),
                initialSequenceNumber: UInt16 = .random(in: .min ... .max),
                initialTimestamp: UInt32 = .random(in: .min ... .max)) {
        self.payloadType = payloadType
        self.ssrc = ssrc
        nextSequenceNumber = initialSequenceNumber
        nextTimestamp = initialTimestamp
    }

    /// Writes the packet for the next frame, lasting `rtpTicks` (48 kHz), with `payload` into `buffer`; returns
    /// its byte count, or nil when it does not fit (nothing advances then).
    public mutating func packetize(_ payload: UnsafeRawBufferPointer, rtpTicks: UInt32,
                                   into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let header = RTPHeader(marker: startsTalkspurt, payloadType: payloadType, sequenceNumber: nextSequenceNumber,
                               timestamp: nextTimestamp, ssrc: ssrc)
        guard let byteCount = RTPPacket(header: header, payload: payload).write(into: buffer) else { return nil }
        startsTalkspurt = false
        nextSequenceNumber &+= 1
        nextTimestamp &+= rtpTicks
        packetCount &+= 1
        octetCount &+= UInt32(truncatingIfNeeded: payload.count)
        return byteCount
    }

    /// Records a frame of `rtpTicks` that is not sent (DTX silence): time moves on, the sequence does not, and
    /// the next packet sent carries the marker bit.
    public mutating func skip(rtpTicks: UInt32) {
        nextTimestamp &+= rtpTicks
        startsTalkspurt = true
    }
}
