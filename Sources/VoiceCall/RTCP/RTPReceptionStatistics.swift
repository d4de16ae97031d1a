/// What a receiver tracks about one RTP source for its reception reports (RFC 3550 A.1, A.3, A.8): the
/// extended highest sequence number, expected versus received counts, and the interarrival jitter.
///
/// `record` and `makeReportBlock` are real-time safe. Owned by one thread.
public struct RTPReceptionStatistics: Sendable {
    /// A jump forward further than this starts a new sequence after two consecutive packets confirm it.
    static let maxDropout: UInt16 = 3000
    /// Packets this far behind the highest are taken as reordered or duplicated.
    static let maxMisorder: UInt16 = 100

    public let ssrc: UInt32
    private var baseSequence: UInt32
    private var highestSequence: UInt16
    private var cycles: UInt32 = 0
    private var badSequence: UInt32 = UInt32.max
    /// Packets received, duplicates included (as RFC 3550 counts them).
    public private(set) var receivedCount: UInt32 = 1
    private var expectedPrior: UInt32 = 0
    private var receivedPrior: UInt32 = 0
    private var lastTransit: UInt32
    /// Interarrival jitter estimate in RTP timestamp ticks (A.8).
    public private(set) var jitterTicks: Double = 0
    private var lastSenderReport: (middle32: UInt32, receivedAt: NTPTimestamp)?

    /// Starts from the source's first packet, which arrived at `arrivalTicks` (the receiver's clock in RTP ticks).
    public init(ssrc: UInt32, sequenceNumber: UInt16, timestamp: UInt32, arrivalTicks: Int64) {
        self.ssrc = ssrc
        baseSequence = UInt32(sequenceNumber)
        highestSequence = sequenceNumber
        lastTransit = UInt32(truncatingIfNeeded: arrivalTicks) &- timestamp
    }

    /// Cycles in the high 16 bits, highest sequence number in the low.
    public var extendedHighestSequence: UInt32 { cycles | UInt32(highestSequence) }

    /// Packets expected from the first to the highest sequence number.
    public var expectedCount: UInt32 { extendedHighestSequence &- baseSequence &+ 1 }

    /// Expected minus received; negative when duplicates outnumber losses.
    public var cumulativeLost: Int64 { Int64(expectedCount) - Int64(receivedCount) }

    /// Takes note of a later packet of the same source.
    public mutating func record(sequenceNumber: UInt16, timestamp: UInt32, arrivalTicks: Int64) {
        let delta = sequenceNumber &- highestSequence
        if delta < Self.maxDropout {
            if sequenceNumber < highestSequence { cycles &+= 1 << 16 }
            highestSequence = sequenceNumber
        } else if delta <= UInt16.max - Self.maxMisorder {
            // A big jump: believe it only when the next packet follows it (the sender restarted its numbering).
            guard UInt32(sequenceNumber) == badSequence else {
                badSequence = UInt32(sequenceNumber &+ 1)
                return
            }
            baseSequence = UInt32(sequenceNumber)
            highestSequence = sequenceNumber
            cycles = 0
            receivedCount = 0
            expectedPrior = 0
            receivedPrior = 0
        }
        receivedCount &+= 1
        let transit = UInt32(truncatingIfNeeded: arrivalTicks) &- timestamp
        let difference = Int32(bitPattern: transit &- lastTransit).magnitude
        lastTransit = transit
        jitterTicks += (Double(difference) - jitterTicks) / 16
    }

    /// Remembers a sender report from this source, received at `arrival`, for LSR and DLSR.
    public mutating func noteSenderReport(_ info: RTCPSenderInfo, arrivedAt arrival: NTPTimestamp) {
        lastSenderReport = (info.ntpTimestamp.middle32, arrival)
    }

    /// The report block for now, and starts the next reporting interval (for the fraction lost).
    public mutating func makeReportBlock(now: NTPTimestamp) -> RTCPReportBlock {
        let expected = expectedCount
        let expectedInterval = Int64(expected &- expectedPrior)
        let receivedInterval = Int64(receivedCount &- receivedPrior)
        expectedPrior = expected
        receivedPrior = receivedCount
        let lostInterval = expectedInterval - receivedInterval
        let fraction = expectedInterval == 0 || lostInterval <= 0 ? 0 : UInt8(min((lostInterval << 8) / expectedInterval, 255))
        let lost = min(max(cumulativeLost, Int64(RTCPReportBlock.cumulativeLostRange.lowerBound)),
                       Int64(RTCPReportBlock.cumulativeLostRange.upperBound))
        return RTCPReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(lost),
            extendedHighestSequence: extendedHighestSequence, jitterTicks: UInt32(jitterTicks),
            lastSenderReport: lastSenderReport?.middle32 ?? 0,
            delaySinceLastSenderReport: lastSenderReport.map { now.middle32 &- $0.receivedAt.middle32 } ?? 0)
    }
}
