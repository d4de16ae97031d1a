import VoiceCall

/// Parses the input as a compound RTCP datagram. A report that parses must hold at most 31 blocks with
/// cumulative losses in their 24-bit range, and writing it out and parsing that again must give it back.
enum RTCPFuzzing {
    static let datagramByteCount = 1500

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let report = try? RTCPReport.parse(input) else { return }
        precondition(report.blocks.count <= RTCPReport.maxBlockCount, "more blocks than the report count allows")
        precondition(report.blocks.allSatisfy { RTCPReportBlock.cumulativeLostRange.contains($0.cumulativeLost) },
                     "cumulative loss outside 24 bits")

        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: datagramByteCount, alignment: 8)
        defer { datagram.deallocate() }
        guard let byteCount = report.write(cname: "fuzz@voiceio", into: datagram) else {
            preconditionFailure("a parsed report does not fit a datagram")
        }
        do {
            let again = try RTCPReport.parse(UnsafeRawBufferPointer(rebasing: datagram[..<byteCount]))
            var expected = report
            expected.saysGoodbye = false
            precondition(again == expected, "report changed in a round trip")
        } catch {
            preconditionFailure("a written report does not parse: \(error)")
        }
    }
}
