import Foundation
import Logging
import Testing
import VoiceCall
import VoiceIO

/// The call's diagnostics go through swift-log, counted by the network thread and logged once a second.
@Suite struct CallDiagnosticsTests {
    final class Captured: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] = []
        func append(_ event: LogEvent) {
            lock.withLock { stored.append((event.level, "\(event.message)", event.metadata ?? [:])) }
        }
        var entries: [(level: Logger.Level, message: String, metadata: Logger.Metadata)] { lock.withLock { stored } }
    }

    struct CapturingHandler: LogHandler {
        let captured: Captured
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { captured.append(event) }
    }

    @Test func datagramsFromAStrangerAreLoggedAsDropsByReason() throws {
        let captured = Captured()
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        let stranger = try UDPSocket(binding: "127.0.0.1:0")
        let session = try CallSession(socket: local, configuration: CallConfiguration(remote: remote.localAddress),
                                      logger: Logger(label: "test") { _ in CapturingHandler(captured: captured) })
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
