/// Decides which RTP source a session plays: the first SSRC heard from the remote is latched; another SSRC is
/// accepted in its place only once the latched one has been silent for `restartSilenceTicks` (the sender
/// restarted), and is refused as foreign before that. Real-time safe; owned by the network thread.
struct SourceFilter {
    enum Verdict: Equatable {
        /// Play it; `isNewSource` when it starts a stream (the first, or after a restart).
        case accept(isNewSource: Bool)
        case foreign
    }

    let restartSilenceTicks: Int64
    private(set) var latchedSSRC: UInt32?
    private var lastHeardTicks: Int64 = 0

    init(restartSilenceTicks: Int64) {
        self.restartSilenceTicks = restartSilenceTicks
    }

    /// Judges a packet of `ssrc` arriving at `arrivalTicks` (any monotonic clock, same unit as the silence).
    mutating func admit(ssrc: UInt32, arrivalTicks: Int64) -> Verdict {
        if let latched = latchedSSRC, latched != ssrc, arrivalTicks - lastHeardTicks < restartSilenceTicks {
            return .foreign
        }
        let isNew = latchedSSRC != ssrc
        latchedSSRC = ssrc
        lastHeardTicks = arrivalTicks
        return .accept(isNewSource: isNew)
    }

    /// Whether an RTCP report from `ssrc` belongs to the remote: any SSRC until one is latched, then only that.
    func acceptsReport(from ssrc: UInt32) -> Bool { latchedSSRC == nil || latchedSSRC == ssrc }
}
