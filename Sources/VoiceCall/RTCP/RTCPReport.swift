/// One reception report block (RFC 3550 §6.4.1): what a receiver says about one source.
public struct RTCPReportBlock: Sendable, Hashable {
    /// The source this block reports on.
    public var ssrc: UInt32
    /// Packets lost since the previous report, as a fraction of those expected, times 256.
    public var fractionLost: UInt8
    /// Packets lost since reception started (24-bit signed on the wire; clamped to its range).
    public var cumulativeLost: Int32
    /// Cycles of the 16-bit sequence number in the high half, highest sequence number received in the low.
    public var extendedHighestSequence: UInt32
    /// Interarrival jitter in RTP timestamp ticks (RFC 3550 A.8).
    public var jitterTicks: UInt32
    /// Middle 32 bits of the NTP time of the last sender report received from `ssrc`, or 0 if none.
    public var lastSenderReport: UInt32
    /// Delay since that sender report was received, in 1/65536 s, or 0 if none.
    public var delaySinceLastSenderReport: UInt32

    public static let cumulativeLostRange: ClosedRange<Int32> = -0x80_0000 ... 0x7f_ffff

    public init(ssrc: UInt32, fractionLost: UInt8, cumulativeLost: Int32, extendedHighestSequence: UInt32,
                jitterTicks: UInt32, lastSenderReport: UInt32, delaySinceLastSenderReport: UInt32) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = min(max(cumulativeLost, Self.cumulativeLostRange.lowerBound), Self.cumulativeLostRange.upperBound)
        self.extendedHighestSequence = extendedHighestSequence
        self.jitterTicks = jitterTicks
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    /// Round-trip time in seconds as seen by the sender of the report this block answers, when the block
    /// arrives at `arrival` (RFC 3550 §6.4.1: A − LSR − DLSR). Nil when the block answers no sender report.
    public func roundTripSeconds(arrivedAt arrival: NTPTimestamp) -> Double? {
        guard lastSenderReport != 0 else { return nil }
        let ticks = arrival.middle32 &- lastSenderReport &- delaySinceLastSenderReport
        guard Int32(bitPattern: ticks) >= 0 else { return nil }
        return Double(ticks) / 65536
    }
}

/// The sender information of a sender report (RFC 3550 §6.4.1).
public struct RTCPSenderInfo: Sendable, Hashable {
    /// Wall-clock time when the report was sent.
    public var ntpTimestamp: NTPTimestamp
    /// The same instant on the stream's RTP clock.
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32

    public init(ntpTimestamp: NTPTimestamp, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32) {
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
    }
}

/// A sender report (with `senderInfo`) or a receiver report (without), as sent in one compound RTCP packet
/// together with an SDES CNAME. Serialising and parsing happen on the network thread; they allocate only the
/// block array.
public struct RTCPReport: Sendable, Hashable {
    public static let senderReportType: UInt8 = 200
    public static let receiverReportType: UInt8 = 201
    public static let sourceDescriptionType: UInt8 = 202
    public static let byeType: UInt8 = 203
    /// At most 31 blocks fit the 5-bit report count.
    public static let maxBlockCount = 31

    /// The SSRC of whoever sent the report.
    public var ssrc: UInt32
    public var senderInfo: RTCPSenderInfo?
    public var blocks: [RTCPReportBlock]
    /// Set by the parser when the compound packet also held a BYE: the source is leaving.
    public var saysGoodbye = false

    public init(ssrc: UInt32, senderInfo: RTCPSenderInfo? = nil, blocks: [RTCPReportBlock] = [], saysGoodbye: Bool = false) {
        self.ssrc = ssrc
        self.senderInfo = senderInfo
        self.blocks = Array(blocks.prefix(Self.maxBlockCount))
        self.saysGoodbye = saysGoodbye
    }

    /// Writes SR or RR, then SDES with `cname` (truncated to 255 bytes), into `buffer`; returns the byte
    /// count, or nil when it does not fit.
    public func write(cname: String, into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let reportBytes = (senderInfo == nil ? 8 : 28) + 24 * blocks.count
        let cnameBytes = Array(cname.utf8.prefix(255))
        // SDES: header, SSRC, CNAME type + length + text, then 1–4 zero bytes ending the chunk on a word.
        let chunkBytes = 4 + 2 + cnameBytes.count
        let sdesBytes = 4 + (chunkBytes + 4) / 4 * 4
        guard buffer.count >= reportBytes + sdesBytes else { return nil }

        buffer.store(UInt8(0x80 | blocks.count), at: 0)
        buffer.store(senderInfo == nil ? Self.receiverReportType : Self.senderReportType, at: 1)
        buffer.store(UInt16(reportBytes / 4 - 1), at: 2)
        buffer.store(ssrc, at: 4)
        var offset = 8
        if let info = senderInfo {
            buffer.store(info.ntpTimestamp.seconds, at: 8)
            buffer.store(info.ntpTimestamp.fraction, at: 12)
            buffer.store(info.rtpTimestamp, at: 16)
            buffer.store(info.packetCount, at: 20)
            buffer.store(info.octetCount, at: 24)
            offset = 28
        }
        for block in blocks {
            buffer.store(block.ssrc, at: offset)
            buffer.store(UInt32(block.fractionLost) << 24 | UInt32(bitPattern: block.cumulativeLost) & 0xff_ffff, at: offset + 4)
            buffer.store(block.extendedHighestSequence, at: offset + 8)
            buffer.store(block.jitterTicks, at: offset + 12)
            buffer.store(block.lastSenderReport, at: offset + 16)
            buffer.store(block.delaySinceLastSenderReport, at: offset + 20)
            offset += 24
        }
        buffer.store(UInt8(0x81), at: offset)
        buffer.store(Self.sourceDescriptionType, at: offset + 1)
        buffer.store(UInt16(sdesBytes / 4 - 1), at: offset + 2)
        buffer.store(ssrc, at: offset + 4)
        buffer.store(UInt8(1), at: offset + 8)
        buffer.store(UInt8(cnameBytes.count), at: offset + 9)
        for (index, byte) in cnameBytes.enumerated() { buffer.store(byte, at: offset + 10 + index) }
        for index in (offset + 10 + cnameBytes.count)..<(offset + sdesBytes) { buffer.store(UInt8(0), at: index) }
        return offset + sdesBytes
    }
}
