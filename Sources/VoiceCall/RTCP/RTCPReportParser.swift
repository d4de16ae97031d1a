extension RTCPReport {
    /// Parses an untrusted compound RTCP datagram: walks every packet, checking each length field against
    /// the datagram before use; returns the first sender or receiver report (with a BYE noted), skipping SDES,
    /// APP and feedback packets. Network thread: allocates the block array.
    public static func parse(_ datagram: UnsafeRawBufferPointer) throws(RTCPParseError) -> RTCPReport {
        var report: RTCPReport?
        var saysGoodbye = false
        var offset = 0
        while offset < datagram.count {
            guard datagram.count - offset >= 4 else { throw .truncatedHeader }
            let first = datagram.uint8(at: offset)
            guard first >> 6 == 2 else { throw .unsupportedVersion }
            let packetType = datagram.uint8(at: offset + 1)
            let packetBytes = (Int(datagram.uint16(at: offset + 2)) + 1) * 4
            guard packetBytes <= datagram.count - offset else { throw .lengthExceedsDatagram }
            var contentBytes = packetBytes
            if first & 0x20 != 0 {
                let paddingBytes = Int(datagram.uint8(at: offset + packetBytes - 1))
                guard paddingBytes > 0, paddingBytes <= packetBytes - 4 else { throw .invalidPadding }
                contentBytes -= paddingBytes
            }
            let packet = UnsafeRawBufferPointer(rebasing: datagram[offset..<(offset + contentBytes)])
            let blockCount = Int(first & 0x1f)
            switch packetType {
            case senderReportType where report == nil:
                report = try parseReport(packet, blockCount: blockCount, hasSenderInfo: true)
            case receiverReportType where report == nil:
                report = try parseReport(packet, blockCount: blockCount, hasSenderInfo: false)
            case byeType:
                saysGoodbye = true
            default:
                break
            }
            offset += packetBytes
        }
        guard var report else { throw .noReport }
        report.saysGoodbye = saysGoodbye
        return report
    }

    private static func parseReport(_ packet: UnsafeRawBufferPointer, blockCount: Int,
                                    hasSenderInfo: Bool) throws(RTCPParseError) -> RTCPReport {
        let blocksStart = hasSenderInfo ? 28 : 8
        guard packet.count >= blocksStart + 24 * blockCount else { throw .reportCountExceedsLength }
        let senderInfo = hasSenderInfo
            ? RTCPSenderInfo(ntpTimestamp: NTPTimestamp(seconds: packet.uint32(at: 8), fraction: packet.uint32(at: 12)),
                             rtpTimestamp: packet.uint32(at: 16), packetCount: packet.uint32(at: 20),
                             octetCount: packet.uint32(at: 24))
            : nil
        var blocks: [RTCPReportBlock] = []
        blocks.reserveCapacity(blockCount)
        for index in 0..<blockCount {
            let at = blocksStart + 24 * index
            let lossWord = packet.uint32(at: at + 4)
            // Sign-extend the 24-bit cumulative loss.
            let cumulativeLost = Int32(bitPattern: lossWord << 8) >> 8
            blocks.append(RTCPReportBlock(
                ssrc: packet.uint32(at: at), fractionLost: UInt8(lossWord >> 24), cumulativeLost: cumulativeLost,
                extendedHighestSequence: packet.uint32(at: at + 8), jitterTicks: packet.uint32(at: at + 12),
                lastSenderReport: packet.uint32(at: at + 16), delaySinceLastSenderReport: packet.uint32(at: at + 20)))
        }
        return RTCPReport(ssrc: packet.uint32(at: 4), senderInfo: senderInfo, blocks: blocks)
    }
}
