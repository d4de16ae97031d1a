#if canImport(Glibc)
import Glibc
#endif
import VoiceCall

/// The relay's loop and counters (see `RelayCommand`). Owned by one thread.
final class Relay {
    private struct Pending {
        var dueNanoseconds: Int64
        var bytes: [UInt8]
        var towardB: Bool
    }

    /// What one direction saw and did.
    struct DirectionCounts: Codable {
        var received = 0
        var forwarded = 0
        var lostRandom = 0
        var lostBurst = 0
        var lostOutage = 0
        var duplicated = 0
        var reordered = 0
    }

    private let peerA: SocketAddress
    private let peerB: SocketAddress
    private let socketA: UDPSocket
    private let socketB: UDPSocket
    private var towardB: LinkImpairment
    private var towardA: LinkImpairment
    private var foreign: ForeignPackets
    private var pending: [Pending] = []
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65536, alignment: 8)
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    private var lastRealRTP: [UInt8] = []
    private let foreignSSRCs: [UInt32]
    private(set) var countsAB = DirectionCounts()
    private(set) var countsBA = DirectionCounts()
    private var strangers = 0
    private var injected = [0, 0, 0]
    private var injectErrors = 0

    init(peerA: SocketAddress, peerB: SocketAddress, socketA: UDPSocket, socketB: UDPSocket,
         towardB: LinkImpairment, towardA: LinkImpairment, foreign: ForeignPackets) {
        self.peerA = peerA
        self.peerB = peerB
        self.socketA = socketA
        self.socketB = socketB
        self.towardB = towardB
        self.towardA = towardA
        var foreign = foreign
        foreignSSRCs = (0..<8).map { _ in foreign.randomSSRC() }
        self.foreign = foreign
    }

    deinit {
        buffer.deallocate()
        scratch.deallocate()
    }

    /// Relays for `seconds`, losing everything during `outage` and injecting during `injection` (both in seconds
    /// from now).
    func run(seconds: Double, outage: Range<Double>?, injection: Range<Double>?, injectRate: Double) {
        let start = Clock.nanoseconds()
        let end = start + Int64(seconds * 1e9)
        var outageState = 0  // 0 before, 1 during, 2 after
        while true {
            let now = Clock.nanoseconds()
            guard now < end else { break }
            let elapsed = Double(now - start) / 1e9
            let inOutage = outage?.contains(elapsed) ?? false
            if inOutage && outageState == 0 || !inOutage && outageState == 1 {
                outageState += 1
                print(String(cFormat: "relay: outage %@ at %.3f s (monotonic %.6f s)", outageState == 1 ? "starts" : "ends",
                             elapsed, Double(now) / 1e9))
                fflush(nil)
            }
            receive(on: socketA, timeoutMilliseconds: 1, inOutage: inOutage)
            receive(on: socketB, timeoutMilliseconds: 0, inOutage: inOutage)
            sendDue(now: Clock.nanoseconds())
            if let injection, injection.contains(elapsed) {
                let due = Int((elapsed - injection.lowerBound) * injectRate) - injected.reduce(0, +)
                for _ in 0..<min(max(due, 0), 2000) { inject() }
            }
        }
    }

    private func receive(on socket: UDPSocket, timeoutMilliseconds: Int, inOutage: Bool) {
        var timeout = timeoutMilliseconds
        for _ in 0..<64 {
            guard let datagram = try? socket.receive(into: buffer, timeoutMilliseconds: timeout) else { return }
            timeout = 0
            let bytes = Array(UnsafeRawBufferPointer(rebasing: buffer[..<datagram.byteCount]))
            if socket === socketA, datagram.source == peerA {
                if bytes.withUnsafeBytes({ DatagramKind(classifying: $0) }) == .rtp { lastRealRTP = bytes }
                impair(bytes, towardB: true, inOutage: inOutage)
            } else if socket === socketB, datagram.source == peerB {
                impair(bytes, towardB: false, inOutage: inOutage)
            } else {
                strangers += 1
            }
        }
    }

    private func impair(_ bytes: [UInt8], towardB: Bool, inOutage: Bool) {
        let fate = towardB ? self.towardB.decide(inOutage: inOutage) : towardA.decide(inOutage: inOutage)
        var counts = towardB ? countsAB : countsBA
        counts.received += 1
        switch fate {
        case .lost(let outage, let burst):
            if outage { counts.lostOutage += 1 } else if burst { counts.lostBurst += 1 } else { counts.lostRandom += 1 }
        case .forward(let delays, let reordered):
            if reordered { counts.reordered += 1 }
            counts.duplicated += delays.count - 1
            let now = Clock.nanoseconds()
            for delay in delays {
                pending.append(Pending(dueNanoseconds: now + Int64(delay * 1e6), bytes: bytes, towardB: towardB))
            }
        }
        if towardB { countsAB = counts } else { countsBA = counts }
    }

    private func sendDue(now: Int64) {
        guard pending.contains(where: { $0.dueNanoseconds <= now }) else { return }
        let due = pending.filter { $0.dueNanoseconds <= now }.sorted { $0.dueNanoseconds < $1.dueNanoseconds }
        pending.removeAll { $0.dueNanoseconds <= now }
        for packet in due {
            let sent: Void? = packet.bytes.withUnsafeBytes { bytes in
                packet.towardB ? try? socketB.send(bytes, to: peerB) : try? socketA.send(bytes, to: peerA)
            }
            if sent != nil {
                if packet.towardB { countsAB.forwarded += 1 } else { countsBA.forwarded += 1 }
            }
        }
    }

    /// One stranger's packet toward B from B's trusted address, in turn: a real packet of A's with a foreign
    /// SSRC, tone RTP with a foreign SSRC, garbage.
    private func inject() {
        let kind = injected.reduce(0, +) % 3
        let ssrc = foreignSSRCs[injected[kind] % foreignSSRCs.count]
        let byteCount: Int
        switch kind {
        case 0: byteCount = lastRealRTP.withUnsafeBytes { ForeignPackets.respoof($0, ssrc: ssrc, into: scratch) }
        case 1: byteCount = foreign.toneRTP(ssrc: ssrc, into: scratch)
        default: byteCount = foreign.garbage(into: scratch)
        }
        injected[kind] += 1
        guard byteCount > 0 else { return }
        do { try socketB.send(UnsafeRawBufferPointer(rebasing: scratch[..<byteCount]), to: peerB) } catch { injectErrors += 1 }
    }

    /// What `--report` writes.
    struct Report: Codable {
        var aToB: DirectionCounts
        var bToA: DirectionCounts
        /// Injected toward B from its trusted address: all, and foreign-SSRC copies, tone RTP, garbage.
        var injected: Int
        var injectedForeignSSRC: Int
        var injectedToneRTP: Int
        var injectedGarbage: Int
        var injectErrors: Int
        /// Datagrams from neither peer, ignored.
        var strangers: Int
    }

    var report: Report {
        Report(aToB: countsAB, bToA: countsBA, injected: injected.reduce(0, +), injectedForeignSSRC: injected[0],
               injectedToneRTP: injected[1], injectedGarbage: injected[2], injectErrors: injectErrors,
               strangers: strangers)
    }

    func summary() -> [String] {
        func line(_ name: String, _ counts: DirectionCounts) -> String {
            let lost = counts.lostRandom + counts.lostBurst
            let outsideOutage = counts.received - counts.lostOutage
            return String(cFormat: "relay: %@ received=%d forwarded=%d lost=%d loss_percent=%.1f (random %d, burst %d; outage %d more) duplicated=%d reordered=%d",
                          name, counts.received, counts.forwarded, lost,
                          outsideOutage > 0 ? 100 * Double(lost) / Double(outsideOutage) : 0, counts.lostRandom,
                          counts.lostBurst, counts.lostOutage, counts.duplicated, counts.reordered)
        }
        var lines = [line("A→B", countsAB), line("B→A", countsBA)]
        if injected.reduce(0, +) > 0 {
            lines.append("relay: injected toward B from its trusted address: \(injected.reduce(0, +)) (foreign-SSRC copies \(injected[0]), tone RTP \(injected[1]), garbage \(injected[2])), send errors \(injectErrors)")
        }
        if strangers > 0 { lines.append("relay: ignored \(strangers) datagrams from neither peer") }
        return lines
    }
}
