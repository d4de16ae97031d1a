/// An adaptive playout buffer for one incoming Opus RTP stream: packets in (any order, any timing), one
/// block of PCM out per pull at the decoder's rate.
///
/// ```
///  push(packet, arrival) --> slots[seq & mask] (fixed capacity, payload copied)      JitterEstimator
///        |  dup/late/invalid: counted, dropped       |                                (transit percentile)
///        |  beyond capacity: oldest dropped          v                                       |
///  pull(pcm) <-- staging PCM <-- OpusDecoder: decode slot[next] | FEC from next+1 | PLC   target delay
/// ```
///
/// Playout follows sequence numbers. Playing starts (and restarts after running dry) once the audio held plus
/// the time since the latest packet arrived (`nowTicks` at the pull minus its arrival) reaches the target
/// delay, which follows the measured jitter (one packet plus a percentile of recent transit deviations, the
/// latter at least `minimumMarginMilliseconds`; at most `maxDelayMilliseconds`): started then, the held audio lasts until the next packet is due plus the
/// jitter margin. Counting the time since arrival, rather than holding out for whole packets or whole pulls,
/// starts a 20 ms stream with 2 ms of jitter at the first pull at least 2 ms after its packet arrived, not
/// one 10 ms pull later (nor one 20 ms packet later). A missing packet with later ones already held is
/// lost: rebuilt from the next packet's FEC when that is held, otherwise concealed. Running dry plays
/// concealment (silence before the first packet), counts an underrun and refills to the target; DTX silence
/// is such a pause. Playout resumes at the oldest packet held: the time of the packets that never came was
/// already filled while dry, so after an outage of any length the delay is back at the target at once. A delay that stays above target for half a second is trimmed by dropping the oldest
/// packet. A new SSRC resets the buffer and the decoder.
///
/// Not thread-safe: one thread (the audio thread) pushes and pulls, draining packets from the network thread
/// through a `PacketQueue`. `push`, `pull` and `statistics` are real-time safe: storage is allocated in `init`.
public final class JitterBuffer {
    private enum SlotState: UInt8 {
        case empty, filled, played, missed
    }

    public let sampleRate: Int
    /// Packets the buffer holds at most.
    public let capacity: Int
    /// Longest payload a slot keeps, in bytes.
    public let maxPayloadByteCount: Int
    public let maxDelayMilliseconds: Int
    /// Share of packets the target delay should catch in time.
    public let jitterPercentile: Double
    /// Margin the target keeps above one packet however small the measured jitter, in frames: the pulls'
    /// own timing varies too (the receiving device's period), which transit times do not show.
    public let minimumMarginFrameCount: Int

    private let decoder: OpusDecoder
    private let mask: Int
    private let slotSequence: UnsafeMutablePointer<Int64>
    private let slotState: UnsafeMutablePointer<SlotState>
    private let slotFrameCount: UnsafeMutablePointer<Int>
    private let slotByteCount: UnsafeMutablePointer<Int>
    private let payloads: UnsafeMutableRawPointer
    private let staging: UnsafeMutableBufferPointer<Float>
    private var stagingStart = 0
    private var stagingEnd = 0

    private var estimator: JitterEstimator
    private var counters = JitterBufferStatistics()
    private var ssrc: UInt32?
    private var highestSequence: Int64 = 0
    private var highestTimestamp: Int64 = 0
    /// The next sequence number to play; before the first playout, the lowest one held.
    private var nextSequence: Int64 = 0
    private var hasPlayed = false
    private var isPlaying = false
    private var heldFrameCount = 0
    private var lastPacketFrameCount: Int
    private var initialTargetFrameCount: Int
    private var excessFrameCount = 0
    /// When the latest packet was pushed, in 48 kHz ticks of the receiver's clock.
    private var latestArrivalTicks: Int64 = 0
    /// The first sequence not played when the buffer last ran dry.
    private var drySinceSequence: Int64 = 0
    /// Frames concealed since the last decoded (or FEC-recovered) packet.
    private var concealmentRunFrameCount = 0

    /// - Parameters:
    ///   - sampleRate: the decoder's rate (one of `OpusFormat.sampleRates`); pulls deliver PCM at this rate.
    ///   - packetMilliseconds: the expected packet duration, used until packets say otherwise.
    ///   - initialDelayMilliseconds: the target before any jitter is measured.
    /// Allocates everything it will use. Not real-time safe.
    public init(sampleRate: Int, packetMilliseconds: Int = 20, capacity: Int = 64, maxPayloadByteCount: Int = 1500,
                initialDelayMilliseconds: Int = 40, maxDelayMilliseconds: Int = 400, jitterPercentile: Double = 0.95,
                jitterWindowPacketCount: Int = 128, minimumMarginMilliseconds: Int = 2) throws(OpusError) {
        precondition(capacity > 1 && capacity <= 1 << 16, "jitter buffer capacity out of range")
        decoder = try OpusDecoder(sampleRate: sampleRate)
        self.sampleRate = sampleRate
        var size = 2
        while size < capacity { size <<= 1 }
        self.capacity = size
        mask = size - 1
        self.maxPayloadByteCount = maxPayloadByteCount
        self.maxDelayMilliseconds = maxDelayMilliseconds
        self.jitterPercentile = jitterPercentile
        minimumMarginFrameCount = sampleRate * minimumMarginMilliseconds / 1000
        slotSequence = .allocate(capacity: size)
        slotSequence.initialize(repeating: -1, count: size)
        slotState = .allocate(capacity: size)
        slotState.initialize(repeating: .empty, count: size)
        slotFrameCount = .allocate(capacity: size)
        slotFrameCount.initialize(repeating: 0, count: size)
        slotByteCount = .allocate(capacity: size)
        slotByteCount.initialize(repeating: 0, count: size)
        payloads = .allocate(byteCount: size * maxPayloadByteCount, alignment: 16)
        staging = .allocate(capacity: OpusFormat.maxPacketFrameCount(sampleRate: sampleRate))
        staging.initialize(repeating: 0)
        estimator = JitterEstimator(windowCount: jitterWindowPacketCount)
        lastPacketFrameCount = sampleRate * packetMilliseconds / 1000
        initialTargetFrameCount = sampleRate * initialDelayMilliseconds / 1000
    }

    deinit {
        slotSequence.deallocate()
        slotState.deallocate()
        slotFrameCount.deallocate()
        slotByteCount.deallocate()
        payloads.deallocate()
        staging.deallocate()
    }

    /// Counters and the current and target delay. Real-time safe.
    public var statistics: JitterBufferStatistics {
        var snapshot = counters
        snapshot.delayMilliseconds = milliseconds(heldFrameCount + stagingEnd - stagingStart)
        snapshot.targetDelayMilliseconds = milliseconds(targetFrameCount)
        return snapshot
    }

    /// The delay playout aims for, in frames at `sampleRate`: never above `maxDelayMilliseconds`, nor above
    /// what the slots can hold less one packet, so a full buffer always starts playing.
    public var targetFrameCount: Int {
        let maxFrames = min(sampleRate * maxDelayMilliseconds / 1000, (capacity - 1) * lastPacketFrameCount)
        guard estimator.sampleCount > 1 else { return min(max(initialTargetFrameCount, lastPacketFrameCount), maxFrames) }
        let jitterFrames = Int(estimator.delayTicks(percentile: jitterPercentile)) * sampleRate / OpusFormat.rtpClockRate
        return min(lastPacketFrameCount + max(jitterFrames, minimumMarginFrameCount), maxFrames)
    }

    // MARK: Push

    /// Takes in one parsed packet that arrived at `arrivalTicks` (the receiver's monotonic clock counted in
    /// 48 kHz ticks). The payload is copied. Real-time safe.
    public func push(_ packet: RTPPacket, arrivalTicks: Int64) {
        let header = packet.header
        if let current = ssrc, current != header.ssrc {
            restart()
            counters.restarts += 1
        }
        let frameCount: Int
        do { frameCount = try decoder.frameCount(ofPacket: packet.payload) } catch {
            counters.invalid += 1
            return
        }
        guard packet.payload.count <= maxPayloadByteCount, frameCount <= staging.count else {
            counters.invalid += 1
            return
        }
        let sequence: Int64
        let timestamp: Int64
        if ssrc == nil {
            ssrc = header.ssrc
            sequence = Int64(header.sequenceNumber)
            timestamp = Int64(header.timestamp)
            highestSequence = sequence
            highestTimestamp = timestamp
            nextSequence = sequence
        } else {
            sequence = highestSequence + Int64(Int16(bitPattern: header.sequenceNumber &- UInt16(truncatingIfNeeded: highestSequence)))
            timestamp = highestTimestamp + Int64(Int32(bitPattern: header.timestamp &- UInt32(truncatingIfNeeded: highestTimestamp)))
        }
        let slot = Int(sequence & Int64(mask))
        if slotSequence[slot] == sequence, slotState[slot] == .filled || slotState[slot] == .played {
            counters.duplicates += 1
            return
        }
        estimator.add(transitTicks: arrivalTicks - timestamp)
        latestArrivalTicks = max(latestArrivalTicks, arrivalTicks)
        if sequence < nextSequence {
            // Before the first playout an early packet may still lower the start, if the window allows.
            guard !hasPlayed, highestSequence - sequence < Int64(capacity) else {
                counters.late += 1
                return
            }
            nextSequence = sequence
        }
        if sequence >= nextSequence + Int64(capacity) { dropOldest(keepingFrom: sequence - Int64(capacity) + 1) }
        store(packet.payload, sequence: sequence, frameCount: frameCount, slot: slot)
        if sequence > highestSequence {
            highestSequence = sequence
            highestTimestamp = timestamp
        }
    }

    private func store(_ payload: UnsafeRawBufferPointer, sequence: Int64, frameCount: Int, slot: Int) {
        if let source = payload.baseAddress {
            (payloads + slot * maxPayloadByteCount).copyMemory(from: source, byteCount: payload.count)
        }
        slotSequence[slot] = sequence
        slotState[slot] = .filled
        slotByteCount[slot] = payload.count
        slotFrameCount[slot] = frameCount
        heldFrameCount += frameCount
        counters.received += 1
    }

    /// Overflow: forgets every sequence below `firstKept`, counting held packets as dropped.
    private func dropOldest(keepingFrom firstKept: Int64) {
        var sequence = nextSequence
        while sequence < firstKept {
            if isHeld(sequence) {
                release(Int(sequence & Int64(mask)), as: .missed)
                counters.overflowDrops += 1
            }
            sequence += 1
        }
        nextSequence = firstKept
    }

    private func restart() {
        for slot in 0..<capacity { slotState[slot] = .empty }
        ssrc = nil
        heldFrameCount = 0
        stagingStart = 0
        stagingEnd = 0
        isPlaying = false
        hasPlayed = false
        excessFrameCount = 0
        latestArrivalTicks = 0
        concealmentRunFrameCount = 0
        estimator.reset()
        try? decoder.reset()
    }

    // MARK: Pull

    /// Fills all of `pcm` with the next audio at `sampleRate`: decoded, recovered, concealed or silent.
    /// `nowTicks` is the time of the pull on the clock arrivals are stamped in (48 kHz ticks). Real-time safe.
    public func pull(into pcm: UnsafeMutableBufferPointer<Float>, nowTicks: Int64) {
        trimIfAboveTarget(pulledFrameCount: pcm.count)
        var written = 0
        while written < pcm.count {
            if stagingEnd > stagingStart {
                let count = min(pcm.count - written, stagingEnd - stagingStart)
                (pcm.baseAddress! + written).update(from: staging.baseAddress! + stagingStart, count: count)
                stagingStart += count
                written += count
                continue
            }
            stagingStart = 0
            stagingEnd = 0
            if !isPlaying {
                let waitedFrameCount = Int(max(nowTicks - latestArrivalTicks, 0) * Int64(sampleRate) / Int64(OpusFormat.rtpClockRate))
                guard heldFrameCount > 0, heldFrameCount + waitedFrameCount >= targetFrameCount else {
                    fillWhileDry(pcm, from: written)
                    return
                }
                isPlaying = true
                let resumed = lowestHeldSequence()
                if hasPlayed {
                    let skipped = Int(max(resumed - drySinceSequence, 0))
                    counters.lost += skipped
                    counters.concealed += skipped
                }
                nextSequence = resumed
            }
            if isHeld(nextSequence) {
                decodeHeld(nextSequence)
            } else if heldFrameCount > 0 {
                recoverLost(nextSequence)
            } else {
                isPlaying = false
                drySinceSequence = nextSequence
                continue
            }
            nextSequence += 1
        }
    }

    /// Nothing to play: silence before the first packet, concealment after, of just the frames missing when
    /// Opus can conceal that span (whole 2.5 ms), so nothing concealed is left staged to delay the next packet.
    /// Counts one underrun.
    private func fillWhileDry(_ pcm: UnsafeMutableBufferPointer<Float>, from written: Int) {
        counters.underruns += 1
        let missing = pcm.count - written
        guard hasPlayed else {
            UnsafeMutableBufferPointer(rebasing: pcm[written...]).update(repeating: 0)
            return
        }
        let quantum = sampleRate / 400
        conceal(frameCount: missing % quantum == 0 && missing <= staging.count ? missing : lastPacketFrameCount)
        noteConcealed(frameCount: stagingEnd)
        let count = min(missing, stagingEnd)
        (pcm.baseAddress! + written).update(from: staging.baseAddress!, count: count)
        stagingStart = count
        if written + count < pcm.count { UnsafeMutableBufferPointer(rebasing: pcm[(written + count)...]).update(repeating: 0) }
    }

    private func decodeHeld(_ sequence: Int64) {
        let slot = Int(sequence & Int64(mask))
        let frameCount = slotFrameCount[slot]
        do {
            stagingEnd = try decoder.decode(payload(slot), into: UnsafeMutableBufferPointer(rebasing: staging[..<frameCount]))
        } catch {
            counters.invalid += 1
            conceal(frameCount: frameCount)
        }
        lastPacketFrameCount = frameCount
        hasPlayed = true
        release(slot, as: .played)
        endConcealment()
    }

    /// `sequence` never came but later packets did: FEC from the next packet if it is held and carries FEC,
    /// else concealment.
    private func recoverLost(_ sequence: Int64) {
        counters.lost += 1
        let slot = Int(sequence & Int64(mask))
        slotSequence[slot] = sequence
        slotState[slot] = .missed
        let next = Int((sequence + 1) & Int64(mask))
        if isHeld(sequence + 1), OpusDecoder.carriesFEC(payload(next)) {
            let frameCount = slotFrameCount[next]
            do {
                stagingEnd = try decoder.recover(fromNext: payload(next), into: UnsafeMutableBufferPointer(rebasing: staging[..<frameCount]))
                counters.fecRecovered += 1
                endConcealment()
                return
            } catch {
                counters.invalid += 1
            }
        }
        conceal(frameCount: lastPacketFrameCount)
        noteConcealed(frameCount: stagingEnd)
        counters.concealed += 1
    }

    private func noteConcealed(frameCount: Int) {
        concealmentRunFrameCount += frameCount
    }

    /// Decoded audio plays again: the run of concealment before it, if the longest yet, is kept.
    private func endConcealment() {
        let run = milliseconds(concealmentRunFrameCount)
        if run > counters.longestConcealmentMilliseconds { counters.longestConcealmentMilliseconds = run }
        concealmentRunFrameCount = 0
    }

    private func conceal(frameCount: Int) {
        let buffer = UnsafeMutableBufferPointer(rebasing: staging[..<frameCount])
        do { stagingEnd = try decoder.conceal(into: buffer) } catch {
            buffer.update(repeating: 0)
            stagingEnd = frameCount
        }
    }

    /// Drops the oldest held packet once the held audio has stayed above target by a packet for 0.5 s.
    private func trimIfAboveTarget(pulledFrameCount: Int) {
        guard isPlaying, heldFrameCount > targetFrameCount + lastPacketFrameCount else {
            excessFrameCount = 0
            return
        }
        excessFrameCount += pulledFrameCount
        guard excessFrameCount >= sampleRate / 2, isHeld(nextSequence) else { return }
        excessFrameCount = 0
        release(Int(nextSequence & Int64(mask)), as: .missed)
        nextSequence += 1
        counters.trimmed += 1
    }

    // MARK: Slots

    private func isHeld(_ sequence: Int64) -> Bool {
        let slot = Int(sequence & Int64(mask))
        return slotSequence[slot] == sequence && slotState[slot] == .filled
    }

    private func release(_ slot: Int, as state: SlotState) {
        heldFrameCount -= slotFrameCount[slot]
        slotState[slot] = state
    }

    private func payload(_ slot: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: payloads + slot * maxPayloadByteCount, count: slotByteCount[slot])
    }

    private func lowestHeldSequence() -> Int64 {
        var sequence = nextSequence
        while !isHeld(sequence), sequence < highestSequence { sequence += 1 }
        return sequence
    }

    private func milliseconds(_ frameCount: Int) -> Double { Double(frameCount) * 1000 / Double(sampleRate) }
}
