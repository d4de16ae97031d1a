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

    /// A burst that overflows the socket's receive buffer before the network thread runs is counted in the call's
    /// statistics as the kernel's drops, and logged as a warning. The kernel reports its drops with the next datagram it
    /// queues, so datagrams go on being sent until one gets in.
    @Test func datagramsTheKernelDroppedAreCountedAndLogged() throws {
        let captured = CapturedLog()
        let local = try UDPSocket(binding: "127.0.0.1:0", receiveBufferBytes: nil)
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        let session = try CallSession(socket: local, configuration: CallConfiguration(remote: remote.localAddress),
                                      logger: captured.logger(label: "test"))
        let garbage = [UInt8](repeating: 0x80, count: 172)
        func send() throws { try garbage.withUnsafeBytes { try remote.send($0, to: local.localAddress) } }
        var sent = 0
        for _ in 0..<(4 * local.receiveBufferBytes / 512) { try send(); sent += 1 }
        try session.start()
        var isCounted = false
        for _ in 0..<50 where !isCounted {
            try send(); sent += 1
            isCounted = waitUntil(seconds: 0.1) { session.statistics.droppedByKernel > 0 }
        }
        #expect(isCounted)
        #expect(waitUntil { session.statistics.droppedByKernel + session.statistics.droppedTotal == sent })
        let statistics = session.statistics
        session.stop()
        #expect(statistics.droppedByKernel + statistics.droppedTotal == sent)
        #expect(statistics.droppedByKernel > sent / 2)
        let warnings = captured.entries.filter { $0.level == .warning && $0.message.hasPrefix("datagrams dropped by the kernel") }
        #expect(warnings.compactMap { Int("\($0.metadata["count"] ?? "")") }.reduce(0, +) == statistics.droppedByKernel)
    }
}
