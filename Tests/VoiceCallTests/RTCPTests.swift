import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

@Suite struct RTCPTests {
    static func bytes(of report: RTCPReport, cname: String = "alice@127.0.0.1") -> [UInt8] {
        var buffer = [UInt8](repeating: 0xee, count: 1500)
        let count = buffer.withUnsafeMutableBytes { report.write(cname: cname, into: $0) }
        return Array(buffer[..<count!])
    }

    static func parse(_ datagram: [UInt8]) -> Result<RTCPReport, RTCPParseError> {
        datagram.withUnsafeBytes { bytes in
            do throws(RTCPParseError) { return .success(try RTCPReport.parse(bytes)) } catch { return .failure(error) }
        }
    }

    static let block = RTCPReportBlock(ssrc: 7, fractionLost: 25, cumulativeLost: -3, extendedHighestSequence: 0x1_0005,
                                       jitterTicks: 480, lastSenderReport: 0x1234_5678, delaySinceLastSenderReport: 6553)

    @Test func senderReportRoundTrip() throws {
        let info = RTCPSenderInfo(ntpTimestamp: NTPTimestamp(seconds: 3_900_000_000, fraction: 0x8000_0000),
                                  rtpTimestamp: 123_456, packetCount: 50, octetCount: 4000)
        let report = RTCPReport(ssrc: 99, senderInfo: info, blocks: [Self.block, RTCPReportBlock(
            ssrc: 8, fractionLost: 0, cumulativeLost: 0x7f_ffff, extendedHighestSequence: 1, jitterTicks: 0,
            lastSenderReport: 0, delaySinceLastSenderReport: 0)])
        let datagram = Self.bytes(of: report)
        #expect(datagram.count % 4 == 0)
        #expect(datagram.withUnsafeBytes { DatagramKind(classifying: $0) } == .rtcp)
        #expect(try Self.parse(datagram).get() == report)
    }

    @Test func receiverReportRoundTrip() throws {
        let report = RTCPReport(ssrc: 5, blocks: [Self.block])
        let datagram = Self.bytes(of: report, cname: "")
        #expect(datagram[1] == 201)
        #expect(try Self.parse(datagram).get() == report)
        #expect(RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: -9_000_000, extendedHighestSequence: 0, jitterTicks: 0,
                                lastSenderReport: 0, delaySinceLastSenderReport: 0).cumulativeLost == -0x80_0000)
    }

    @Test func rejectsMalformedWithReason() {
        let valid = Self.bytes(of: RTCPReport(ssrc: 5, blocks: [Self.block]))
        func expect(_ datagram: [UInt8], _ reason: RTCPParseError) {
            #expect(throws: reason) { try Self.parse(datagram).get() }
        }
        expect([0x81, 201, 0], .truncatedHeader)
        expect([0x41] + valid.dropFirst(), .unsupportedVersion)
        expect(Array(valid[..<20]), .lengthExceedsDatagram)
        expect([0x81, 201, 0, 1, 0, 0, 0, 5], .reportCountExceedsLength)
        expect([0xa0, 201, 0, 1, 0, 0, 0, 9], .invalidPadding)
        expect([0x80, 202, 0, 0], .noReport)
        expect([], .noReport)
    }

    @Test func survivesFuzzing() {
        var random = SplitMix64(seed: 0xc0ffee)
        let valid = Self.bytes(of: RTCPReport(ssrc: 5, senderInfo: RTCPSenderInfo(
            ntpTimestamp: NTPTimestamp(seconds: 1, fraction: 2), rtpTimestamp: 3, packetCount: 4, octetCount: 5), blocks: [Self.block]))
        var accepted = 0
        for round in 0..<20000 {
            var datagram = round % 2 == 0
                ? (0..<Int.random(in: 0...120, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
                : Array(valid.prefix(Int.random(in: 0...valid.count, using: &random)))
            for _ in 0..<Int.random(in: 0...3, using: &random) where !datagram.isEmpty {
                datagram[Int.random(in: 0..<datagram.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            if case .success(let report) = Self.parse(datagram) {
                #expect(report.blocks.count <= RTCPReport.maxBlockCount)
                accepted += 1
            }
        }
        #expect(accepted > 100)
    }

    /// RFC 3550 A.8 on an arrival pattern that alternates 0 and 10 ms late: |D| is always 480 ticks, so the
    /// jitter estimate converges to 480. Loss and the extended sequence number across a wrap are counted.
    @Test func receptionStatistics() {
        var statistics: RTPReceptionStatistics?
        for index in 0..<300 where index != 100 && index != 101 {
            let sequence = UInt16(truncatingIfNeeded: 65400 + index)
            let timestamp = UInt32(truncatingIfNeeded: 960 * index) &+ 0xffff_0000
            let arrival = Int64(5000 + 960 * index + (index % 2 == 0 ? 0 : 480))
            if statistics == nil {
                statistics = RTPReceptionStatistics(ssrc: 9, sequenceNumber: sequence, timestamp: timestamp, arrivalTicks: arrival)
            } else {
                statistics!.record(sequenceNumber: sequence, timestamp: timestamp, arrivalTicks: arrival)
            }
        }
        var stats = statistics!
        #expect(abs(stats.jitterTicks - 480) < 1)
        #expect(stats.extendedHighestSequence == 65400 + 299)
        #expect(stats.cumulativeLost == 2)
        let block = stats.makeReportBlock(now: NTPTimestamp(seconds: 10, fraction: 0))
        #expect(block.fractionLost == UInt8(2 * 256 / 300))
        #expect(block.cumulativeLost == 2)
        #expect((479...480).contains(block.jitterTicks))
        #expect(block.lastSenderReport == 0 && block.delaySinceLastSenderReport == 0)
        stats.record(sequenceNumber: UInt16(truncatingIfNeeded: 65400 + 300), timestamp: 0, arrivalTicks: 0)
        #expect(stats.makeReportBlock(now: NTPTimestamp(seconds: 10, fraction: 0)).fractionLost == 0)
    }

    /// LSR/DLSR close the loop: the sender of a report gets back the round trip minus the receiver's hold time.
    @Test func roundTripTime() {
        let sentAt = NTPTimestamp(secondsSince1900: 3_900_000_000.25)
        var statistics = RTPReceptionStatistics(ssrc: 1, sequenceNumber: 0, timestamp: 0, arrivalTicks: 0)
        // The SR takes 20 ms one way; the receiver holds it 300 ms before reporting; the RR takes 30 ms back.
        statistics.noteSenderReport(RTCPSenderInfo(ntpTimestamp: sentAt, rtpTimestamp: 0, packetCount: 1, octetCount: 1),
                                    arrivedAt: NTPTimestamp(secondsSince1900: 1000.0))
        let block = statistics.makeReportBlock(now: NTPTimestamp(secondsSince1900: 1000.3))
        #expect(block.lastSenderReport == sentAt.middle32)
        let rtt = block.roundTripSeconds(arrivedAt: NTPTimestamp(secondsSince1900: 3_900_000_000.25 + 0.02 + 0.3 + 0.03))
        #expect(abs(rtt! - 0.05) < 0.001, "rtt \(rtt!)")
        #expect(RTCPReportBlock(ssrc: 1, fractionLost: 0, cumulativeLost: 0, extendedHighestSequence: 0, jitterTicks: 0,
                                lastSenderReport: 0, delaySinceLastSenderReport: 0).roundTripSeconds(arrivedAt: sentAt) == nil)
        let now = NTPTimestamp.now()
        #expect(now.seconds > 3_900_000_000)
    }
}
