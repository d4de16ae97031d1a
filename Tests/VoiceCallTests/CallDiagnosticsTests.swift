import Foundation
import LogCapture
import Logging
import Testing
import VoiceCall
import VoiceIO

/// The call's diagnostics go through swift-log, counted by the network thread and logged once a second.
@Suite struct CallDiagnosticsTests {
    @Test func datagramsFromAStrangerAreLoggedAsDropsByReason() throws {
        let captured = CapturedLog()
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        let stranger = try UDPSocket(binding: "127.0.0.1:0")
        let session = try CallSession(socket: local, configuration: CallConfiguration(remote: remote.localAddress),
                                      logger: captured.logger(label: "test"))
        try session.start()
        var stream = try RTPStreamFixture(ssrc: 0x5757)
        for packet in try stream.packets([Float](repeating: 0.1, count: 8000)) {
            try stranger.send(packet, to: local.localAddress)
        }
        #expect(waitUntil { session.statistics.dropped(.wrongSource) == 25 })
        session.stop()

        let drops = captured.entries.filter { $0.level == .warning && $0.message == "datagrams dropped" }
        let logged = drops.compactMap { Int("\($0.metadata["count"] ?? "")") }.reduce(0, +)
        #expect(logged == 25, "each drop is logged once, summed over the lines: \(drops)")
        #expect(drops.allSatisfy { "\($0.metadata["reasons"] ?? "")".contains("wrong source") })
        #expect(drops.count <= 2, "a line a second, not one per packet")
    }
}
