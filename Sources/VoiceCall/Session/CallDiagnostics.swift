import Logging
import VoiceIO

/// The call's diagnostics through swift-log, from a `SnapshotWatcher`'s queue once a second (the network and
/// audio threads only count): datagrams dropped by reason, the remote's stream taken over by a new SSRC, jitter
/// buffer restarts, send and receive errors. Under a flood this is one line per second, not one per packet.
final class CallDiagnostics {
    static let intervalMilliseconds = 1000

    private let logger: Logger
    private let watcher: SnapshotWatcher<CallStatistics>

    init(logger: Logger, take: @escaping () -> CallStatistics?) {
        self.logger = logger
        watcher = SnapshotWatcher(label: "CallSession.diagnostics", intervalMilliseconds: Self.intervalMilliseconds,
                                  take: take) { previous, current in Self.log(previous, current, logger: logger) }
    }

    func start() { watcher.start() }

    func stop() {
        guard let last = watcher.stop() else { return }
        logger.debug("call stopped", metadata: ["sent": "\(last.packetsSent)", "received": "\(last.packetsReceived)",
                                               "lost": "\(last.packetsLost)", "dropped": "\(last.droppedTotal)"])
    }

    private static func log(_ previous: CallStatistics?, _ now: CallStatistics, logger: Logger) {
        // A new SSRC's first packets wait on probation in every call: that is routine, the rest is not.
        var routine: [(reason: String, count: Int)] = []
        var dropped: [(reason: String, count: Int)] = []
        for (reason, count) in now.dropped {
            let new = count - (previous?.dropped[reason] ?? 0)
            guard new > 0 else { continue }
            if reason == .sourceOnProbation { routine.append(("\(reason)", new)) } else { dropped.append(("\(reason)", new)) }
        }
        for (level, drops) in [(Logger.Level.warning, dropped), (.info, routine)] where !drops.isEmpty {
            let reasons = drops.sorted { $0.count > $1.count }.map { "\($0.count) \($0.reason)" }
            logger.log(level: level, "datagrams dropped", metadata: [
                "count": "\(drops.reduce(0) { $0 + $1.count })", "reasons": "\(reasons.joined(separator: ", "))",
            ])
        }
        if now.sourceTakeovers > (previous?.sourceTakeovers ?? 0) {
            let ssrc = now.remoteSSRC.map { String($0, radix: 16) } ?? "none"
            logger.notice("remote stream taken over by a new SSRC", metadata: ["ssrc": "\(ssrc)"])
        }
        if now.jitterBuffer.restarts > (previous?.jitterBuffer.restarts ?? 0) {
            logger.notice("jitter buffer restarted", metadata: ["restarts": "\(now.jitterBuffer.restarts)"])
        }
        let errors = (now.sendErrors - (previous?.sendErrors ?? 0), now.receiveErrors - (previous?.receiveErrors ?? 0))
        if errors.0 > 0 || errors.1 > 0 {
            logger.warning("socket errors", metadata: ["send": "\(errors.0)", "receive": "\(errors.1)"])
        }
        let droppedByKernel = now.droppedByKernel - (previous?.droppedByKernel ?? 0)
        if droppedByKernel > 0 {
            logger.warning("datagrams dropped by the kernel, the socket's receive buffer full (a flood, or the network thread behind)",
                           metadata: ["count": "\(droppedByKernel)", "total": "\(now.droppedByKernel)"])
        }
        let lost = now.packetsLost - (previous?.packetsLost ?? 0)
        if lost > 0 { logger.debug("packets lost", metadata: ["count": "\(lost)", "total": "\(now.packetsLost)"]) }
    }
}
