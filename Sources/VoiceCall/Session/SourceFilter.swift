import COpus

/// Decides which RTP source a session plays. The remote's address and port are all that vouch for a datagram
/// (no SRTP), so an SSRC has to earn the latch:
///
/// - With no source latched, or the latched one silent for `restartSilenceTicks` (the sender restarted, or an
///   outage), a new SSRC is on probation until it has sent `probationPacketCount` packets in a row that are
///   well-formed Opus (a valid TOC, 2.5–120 ms) and progress as a stream does (sequence number up by
///   1…`maximumSequenceStep`, timestamp forward by at most `maximumTimestampStepTicks`); its packets are not
///   played until then. Up to `candidateCapacity` SSRCs are on probation at once; a newcomer takes the slot of
///   the least advanced one (the longest silent among equals).
/// - The latched SSRC always plays, also after a silence: when it resumes it keeps the stream and the candidates
///   are forgotten. Another SSRC is foreign while it is live.
///
/// What this does not stop: a sender that can spoof the remote's address and emits a well-formed stream before
/// the remote's first packet, or during an outage longer than the restart silence, still takes the stream
/// (counted as a takeover by the caller). Real-time safe (no allocation after init); owned by the network thread.
struct SourceFilter {
    enum Verdict: Equatable {
        /// Play it; `isNewSource` when it starts a stream (the first, or a takeover after a silence).
        case accept(isNewSource: Bool)
        /// From an SSRC that has not yet sent enough plausible packets to be latched.
        case probation
        /// From another SSRC while the latched one is live.
        case foreign
    }

    /// An SSRC on probation: where its stream stands and how many plausible packets in a row it sent.
    private struct Candidate {
        var ssrc: UInt32 = 0
        var sequenceNumber: UInt16 = 0
        var timestamp: UInt32 = 0
        var consecutiveCount = 0
        var lastHeardTicks: Int64 = 0
    }

    static let probationPacketCount = 3
    static let candidateCapacity = 4
    static let maximumSequenceStep: UInt16 = 4
    /// Two seconds of the 48 kHz RTP clock: covers DTX, which sends a packet every 400 ms in silence.
    static let maximumTimestampStepTicks: UInt32 = 96_000
    /// Packet durations Opus allows, in 48 kHz samples (2.5 to 120 ms).
    static let opusPacketSamples: ClosedRange<Int32> = 120...5760

    let restartSilenceTicks: Int64
    private(set) var latchedSSRC: UInt32?
    private var lastHeardTicks: Int64 = 0
    private var candidates = [Candidate](repeating: Candidate(), count: SourceFilter.candidateCapacity)

    init(restartSilenceTicks: Int64) {
        self.restartSilenceTicks = restartSilenceTicks
    }

    /// Judges a packet with `header` and Opus `payload` arriving at `arrivalTicks` (any monotonic clock, same unit
    /// as the silence).
    mutating func admit(_ header: RTPHeader, payload: UnsafeRawBufferPointer, arrivalTicks: Int64) -> Verdict {
        if header.ssrc == latchedSSRC {
            lastHeardTicks = arrivalTicks
            forgetCandidates()
            return .accept(isNewSource: false)
        }
        if latchedSSRC != nil, arrivalTicks - lastHeardTicks < restartSilenceTicks { return .foreign }
        guard Self.isWellFormedOpus(payload) else {
            if let slot = candidates.firstIndex(where: { $0.consecutiveCount > 0 && $0.ssrc == header.ssrc }) {
                candidates[slot].consecutiveCount = 0
            }
            return .probation
        }
        let slot = candidates.firstIndex { $0.consecutiveCount > 0 && $0.ssrc == header.ssrc } ?? newcomerSlot()
        var candidate = candidates[slot]
        if candidate.consecutiveCount > 0 && candidate.ssrc == header.ssrc
            && (1...Self.maximumSequenceStep).contains(header.sequenceNumber &- candidate.sequenceNumber)
            && (1...Self.maximumTimestampStepTicks).contains(header.timestamp &- candidate.timestamp) {
            candidate.consecutiveCount += 1
        } else {
            candidate.consecutiveCount = 1
        }
        candidate.ssrc = header.ssrc
        candidate.sequenceNumber = header.sequenceNumber
        candidate.timestamp = header.timestamp
        candidate.lastHeardTicks = arrivalTicks
        candidates[slot] = candidate
        guard candidate.consecutiveCount >= Self.probationPacketCount else { return .probation }
        latchedSSRC = header.ssrc
        lastHeardTicks = arrivalTicks
        forgetCandidates()
        return .accept(isNewSource: true)
    }

    /// Whether an RTCP report from `ssrc` belongs to the remote: any SSRC until one is latched, then only that.
    func acceptsReport(from ssrc: UInt32) -> Bool { latchedSSRC == nil || latchedSSRC == ssrc }

    /// Whether `payload` parses as one Opus packet of a duration Opus allows. Real-time safe.
    static func isWellFormedOpus(_ payload: UnsafeRawBufferPointer) -> Bool {
        guard let base = payload.baseAddress, !payload.isEmpty else { return false }
        let samples = opus_packet_get_nb_samples(base.assumingMemoryBound(to: UInt8.self), Int32(payload.count),
                                                 Int32(OpusFormat.rtpClockRate))
        return opusPacketSamples.contains(samples)
    }

    /// The slot a new SSRC takes: a free one, else the least advanced candidate, the longest silent among equals.
    private func newcomerSlot() -> Int {
        var chosen = 0
        for index in candidates.indices {
            let (a, b) = (candidates[index], candidates[chosen])
            if a.consecutiveCount < b.consecutiveCount
                || (a.consecutiveCount == b.consecutiveCount && a.lastHeardTicks < b.lastHeardTicks) {
                chosen = index
            }
        }
        return chosen
    }

    private mutating func forgetCandidates() {
        for index in candidates.indices { candidates[index].consecutiveCount = 0 }
    }
}
