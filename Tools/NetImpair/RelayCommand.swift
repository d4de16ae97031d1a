import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO

/// `netimpair relay`: forwards between two call peers through two sockets of its own (each peer's --remote is
/// one of them), impairing both directions alike, with an optional outage (everything lost) and an optional
/// injection of strangers' packets toward B from the very address B trusts.
///
/// ```
///  peer A ──► listen-a ──[impair A→B]──► listen-b ──► peer B      (B's --remote is listen-b)
///  peer A ◄── listen-a ◄──[impair B→A]── listen-b ◄── peer B      (A's --remote is listen-a)
///                                           └── injected: A's packets with foreign SSRCs, tone RTP, garbage
/// ```
/// A single thread: waits at most 1 ms for a datagram, then sends what is due.
struct RelayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relay", abstract: "Forward between two peers with loss, jitter, reordering, duplication and an outage.")

    @Option(name: .customLong("peer-a"), help: "Peer A's HOST:PORT.") var peerA: String
    @Option(name: .customLong("peer-b"), help: "Peer B's HOST:PORT.") var peerB: String
    @Option(name: .customLong("listen-a"), help: "Where A sends (A's --remote).") var listenA: String
    @Option(name: .customLong("listen-b"), help: "Where B sends (B's --remote).") var listenB: String
    @Option(help: "Stop after this many seconds.") var seconds: Double
    @Option(name: .customLong("loss-percent"), help: "Random loss, in percent.") var lossPercent = 0.0
    @Option(name: .customLong("burst-start-percent"), help: "Chance per datagram of a loss burst starting (Gilbert-Elliott).")
    var burstStartPercent = 0.0
    @Option(name: .customLong("burst-end-percent"), help: "Chance per datagram of a burst ending.") var burstEndPercent = 25.0
    @Option(name: .customLong("jitter-ms"), help: "Each datagram is delayed by a uniform 0 to this many ms.") var jitterMilliseconds = 0.0
    @Option(name: .customLong("reorder-percent"), help: "Share held back --reorder-ms more.") var reorderPercent = 0.0
    @Option(name: .customLong("reorder-ms")) var reorderMilliseconds = 50.0
    @Option(name: .customLong("duplicate-percent")) var duplicatePercent = 0.0
    @Option(name: .customLong("outage-at"), help: "Outage start, seconds after the relay starts.") var outageAt: Double?
    @Option(name: .customLong("outage-seconds")) var outageSeconds = 5.0
    @Option(name: .customLong("inject-rate"), help: "Strangers' packets per second toward B from listen-b.") var injectRate = 0.0
    @Option(name: .customLong("inject-at"), help: "Injection start, seconds after the relay starts.") var injectAt = 0.0
    @Option(name: .customLong("inject-seconds")) var injectSeconds = 0.0
    @Option var seed: UInt64 = 1
    @Option(help: "Also write the counts as JSON to this file when done.") var report: String?

    func validate() throws {
        for (name, value) in [("loss", lossPercent), ("burst-start", burstStartPercent), ("burst-end", burstEndPercent),
                              ("reorder", reorderPercent), ("duplicate", duplicatePercent)] where !(0...100).contains(value) {
            throw ValidationError("--\(name)-percent must be within 0–100")
        }
        guard seconds > 0, jitterMilliseconds >= 0, injectRate >= 0, injectRate <= 200_000 else {
            throw ValidationError("--seconds must be positive, --jitter-ms not negative, --inject-rate within 0–200000")
        }
    }

    func run() throws {
        let settings = LinkImpairment.Settings(
            randomLossPercent: lossPercent, burstStartPercent: burstStartPercent, burstEndPercent: burstEndPercent,
            jitterMilliseconds: jitterMilliseconds, reorderPercent: reorderPercent,
            reorderMilliseconds: reorderMilliseconds, duplicatePercent: duplicatePercent)
        let relay = Relay(
            peerA: try SocketAddress.resolve(peerA), peerB: try SocketAddress.resolve(peerB),
            socketA: try UDPSocket(binding: listenA), socketB: try UDPSocket(binding: listenB),
            towardB: LinkImpairment(settings: settings, seed: seed),
            towardA: LinkImpairment(settings: settings, seed: seed &+ 1),
            foreign: try ForeignPackets(payloadType: RTPHeader.defaultPayloadType, seed: seed &+ 2))
        print(String(cFormat: "relay: %@ ⇄ %@, expected loss %.1f %% (random %.1f %%, bursts of %.1f datagrams on average), jitter 0–%.0f ms, reordered %.1f %%, duplicated %.1f %%",
                     listenA, listenB, settings.expectedLossPercent, lossPercent, 100 / max(burstEndPercent, 1),
                     jitterMilliseconds, reorderPercent, duplicatePercent))
        fflush(nil)
        let outage = outageAt.map { $0..<($0 + outageSeconds) }
        let injection = injectRate > 0 ? injectAt..<(injectAt + injectSeconds) : nil
        relay.run(seconds: seconds, outage: outage, injection: injection, injectRate: injectRate)
        for line in relay.summary() { print(line) }
        if let report { try ReportJSON.encode(relay.report).write(toFile: report, atomically: true, encoding: .utf8) }
    }
}
