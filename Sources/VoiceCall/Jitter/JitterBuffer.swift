/// An adaptive playout buffer for one incoming Opus RTP stream: packets in (any order, any timing), one
/// block of PCM out per pull at the decoder's rate.
///
/// ```
///  push(packet, arrival) --> slots[seq & mask] (fixed capacity, payload copied)      JitterEstimator
///        |  dup/late/invalid: counted, dropped       |                                (transit percentile)
///        |  beyond capacity: oldest dropped          v                                       |
///  pull(pcm) <-- staging PCM <-- OpusDecoder: decode slot[next] | FEC from next+1 | PLC   target delay
///                    ^                                                                        |
///                    +-- TimeStretcher: accelerate / expand <-- LatencyController (excess) <--+
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
/// already filled while dry, so after an outage of any length the delay is back at the target at once.
///
/// Latency control: audio that arrives while nothing is consumed must not become delay. At the puller's first
/// pull and when it comes back after a pause longer than `pullGapMilliseconds` (a device that started late, was
/// suspended or stalled), the oldest audio ahead of playout is skipped down to the target at once (nothing was
/// heard yet, or the listener has just heard the device's own gap).
/// Excess that builds up while playing (a burst, a falling target, clock drift) is removed smoothly by the
/// `LatencyController`: silent and DTX frames are shortened first, speech is time-compressed by whole pitch
/// periods (at a bounded rate). A lasting excess beyond `burstSkipMilliseconds` (a backlog that arrived in a
/// burst, which compression at a third would take seconds to remove) is skipped down to the target at once, the
/// jump cross-faded over `burstCrossfadeMilliseconds`. When the buffer runs dry while playing, the last pitch period of the frame
/// just played is played once more ("expand") before concealment starts, so a packet a little late plays on
/// with nothing lost. All of it is counted, in milliseconds, in the statistics.
///
/// A new SSRC resets the buffer and the decoder.
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

    /// The puller not pulling for longer than this (beyond the frames it last took) counts as a pause of the
    /// consuming device: the audio that piled up meanwhile is skipped down to the target.
    public static let pullGapMilliseconds = 100
    /// Packets arriving this close after the previous arrival (in 48 kHz ticks: 1 ms) came in one burst.
    static let burstArrivalTicks: Int64 = 48
    /// Nothing arriving for longer than this (in 48 kHz ticks: 200 ms) is an outage: the burst that ends it is the
    /// backlog, not how the sender sends.
    static let outageArrivalTicks: Int64 = 48 * 200
    /// A lasting excess over the target beyond this, while playing, is skipped at once rather than compressed.
    public static let burstSkipMilliseconds = 200
    /// The jump of a burst skip fades from the audio that would have played to the audio after the skip over
    /// this long.
    public static let burstCrossfadeMilliseconds = 5

    private let decoder: OpusDecoder
    private let stretcher: TimeStretcher
    private var control: LatencyController
    /// Longest packet a slot may describe, in frames.
    private let maxPacketFrameCount: Int
    private let burstSkipFrameCount: Int
    private let burstCrossfadeFrameCount: Int
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
    private var heldPacketCount = 0
    /// When the last pull happened, and how many frames it took (none yet: `Int64.min`).
    private var lastPullTicks = Int64.min
    private var lastPullFrameCount = 0
    /// The pull before the last: a device's chain may top a period up with a tiny second pull, and latency
    /// control's tolerance is the larger of the two (the period's pull, not the top-up).
    private var previousPullFrameCount = 0
    /// The current pull's time, in 48 kHz ticks.
    private var nowTicks: Int64 = 0
    /// No pull has found the buffer waiting since the puller's first pull or its last pause: audio held when
    /// playout starts piled up while nothing was consumed, and is skipped down to the target.
    private var skipOnResume = true
    /// The frame in the staging area came from a packet (not from an expansion) and may be expanded once.
    private var mayExpand = false
    /// A packet of the current stream carried in-band FEC.
    private var streamCarriesFEC = false
    private var lastPacketFrameCount: Int
    private var initialTargetFrameCount: Int
    /// When the latest packet was pushed, in 48 kHz ticks of the receiver's clock.
    private var latestArrivalTicks: Int64 = 0
    /// The packets arriving now are a burst that ended an outage (set by a gap of `outageArrivalTicks`, cleared by
    /// the next packet that does not come in the same burst).
    private var isBacklogBurst = false
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
        maxPacketFrameCount = OpusFormat.maxPacketFrameCount(sampleRate: sampleRate)
        burstSkipFrameCount = sampleRate * Self.burstSkipMilliseconds / 1000
        burstCrossfadeFrameCount = sampleRate * Self.burstCrossfadeMilliseconds / 1000
        stretcher = TimeStretcher(sampleRate: sampleRate)
        control = LatencyController(sampleRate: sampleRate)
        // Two packets (accelerate works on at least two pitch periods) plus one period of expansion.
        staging = .allocate(capacity: 2 * maxPacketFrameCount + stretcher.maxPeriodFrameCount)
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
        snapshot.delayMilliseconds = milliseconds(isPlaying ? aheadFrameCount : heldFrameCount + stagingEnd - stagingStart)
        snapshot.targetDelayMilliseconds = milliseconds(targetFrameCount)
        return snapshot
    }

    /// The delay playout aims for, in frames at `sampleRate`: never above `maxDelayMilliseconds`, nor above
    /// what the slots can hold less one packet, so a full buffer always starts playing. A stream that carries
    /// in-band FEC gets one packet more, so a lost packet's successor is there in time to rebuild it.
    public var targetFrameCount: Int {
        let maxFrames = min(sampleRate * maxDelayMilliseconds / 1000, (capacity - 1) * lastPacketFrameCount)
        guard estimator.sampleCount > 1 else { return min(max(initialTargetFrameCount, lastPacketFrameCount), maxFrames) }
        let jitterFrames = Int(estimator.delayTicks(percentile: jitterPercentile)) * sampleRate / OpusFormat.rtpClockRate
        let fecFrames = streamCarriesFEC ? lastPacketFrameCount : 0
        return min(lastPacketFrameCount + fecFrames + max(jitterFrames, minimumMarginFrameCount), maxFrames)
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
        guard packet.payload.count <= maxPayloadByteCount, frameCount <= maxPacketFrameCount else {
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
        // A packet that arrives with the one before it in the burst that ends an outage was late only because it
        // queued behind it: the burst's first packet already measured that outage, and the others' spread of
        // transits would pass for lasting jitter (a 1 s burst would hold the target at its maximum for seconds).
        // A sender that always sends in bursts (ffmpeg) is measured whole: its bursts are its jitter.
        let gapTicks = arrivalTicks - latestArrivalTicks
        let isNewest = sequence > highestSequence
        if isNewest, gapTicks > Self.outageArrivalTicks {
            isBacklogBurst = true
        } else if isNewest, gapTicks >= Self.burstArrivalTicks {
            isBacklogBurst = false
        }
        if !(isBacklogBurst && isNewest && gapTicks < Self.burstArrivalTicks) {
            estimator.add(transitTicks: arrivalTicks - timestamp)
        }
        if !streamCarriesFEC, OpusDecoder.carriesFEC(packet.payload) { streamCarriesFEC = true }
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
        heldPacketCount += 1
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
        heldPacketCount = 0
        stagingStart = 0
        stagingEnd = 0
        isPlaying = false
        hasPlayed = false
        control.reset()
        skipOnResume = true
        streamCarriesFEC = false
        latestArrivalTicks = 0
        isBacklogBurst = false
        concealmentRunFrameCount = 0
        estimator.reset()
        try? decoder.reset()
    }

    // MARK: Pull

    /// Fills all of `pcm` with the next audio at `sampleRate`: decoded, recovered, concealed or silent.
    /// `nowTicks` is the time of the pull on the clock arrivals are stamped in (48 kHz ticks). Real-time safe.
    public func pull(into pcm: UnsafeMutableBufferPointer<Float>, nowTicks: Int64) {
        self.nowTicks = nowTicks
        notePullGap(pulledFrameCount: pcm.count)
        var written = 0
        while written < pcm.count {
            if stagingEnd > stagingStart {
                let count = min(pcm.count - written, stagingEnd - stagingStart)
                (pcm.baseAddress! + written).update(from: staging.baseAddress! + stagingStart, count: count)
                stagingStart += count
                written += count
                continue
            }
            let playedFrameCount = stagingEnd
            stagingStart = 0
            stagingEnd = 0
            if !isPlaying {
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
                    control.resumed(concealedFrameCount: concealmentRunFrameCount,
                                    toleranceFrameCount: max(lastPullFrameCount, previousPullFrameCount),
                                    packetFrameCount: lastPacketFrameCount)
                }
                nextSequence = resumed
                // The puller's first pull, or its first after a pause: what piled up meanwhile goes. After
                // pulls that found nothing to play, what came (in a burst) plays and latency control shortens it.
                if skipOnResume { skipStale(waitedFrameCount: waitedFrameCount) }
            }
            if isHeld(nextSequence) {
                playHeld()
            } else if heldFrameCount > 0 {
                recoverLost(nextSequence)
                nextSequence += 1
                mayExpand = false
            } else {
                // Dry while playing: a level below the target, which latency control must not take for excess.
                if mayExpand { observeLevel(decodedFrameCount: 0) }
                if expandLastFrame(playedFrameCount: playedFrameCount) { continue }
                isPlaying = false
                drySinceSequence = nextSequence
            }
        }
    }

    /// Time since the latest packet arrived, in frames.
    private var waitedFrameCount: Int {
        Int(max(nowTicks - latestArrivalTicks, 0) * Int64(sampleRate) / Int64(OpusFormat.rtpClockRate))
    }

    /// Audio ahead of playout while playing, in frames: staged, held, and the packets missing between (each
    /// will be concealed, so each takes its time too).
    private var aheadFrameCount: Int {
        let missing = max(Int(highestSequence - nextSequence + 1) - heldPacketCount, 0)
        return stagingEnd - stagingStart + heldFrameCount + missing * lastPacketFrameCount
    }

    /// A pull long after the previous one (the device paused): what arrived meanwhile is skipped to the target.
    private func notePullGap(pulledFrameCount: Int) {
        defer {
            lastPullTicks = nowTicks
            previousPullFrameCount = lastPullFrameCount
            lastPullFrameCount = pulledFrameCount
        }
        guard lastPullTicks != Int64.min else { return }
        let expectedTicks = Int64(lastPullFrameCount * OpusFormat.rtpClockRate / sampleRate)
        let gapTicks = Int64(OpusFormat.rtpClockRate * Self.pullGapMilliseconds / 1000)
        guard nowTicks - lastPullTicks - expectedTicks > gapTicks else { return }
        counters.pullGaps += 1
        if isPlaying { skipStale(waitedFrameCount: 0) } else { skipOnResume = true }
    }

    /// Drops the oldest audio ahead of playout (staged frames, then packets, held or missing) as long as what
    /// remains, plus `waitedFrameCount` (time the newest packet already waited), still reaches the target.
    /// Counts what it dropped as skipped after a pause.
    private func skipStale(waitedFrameCount: Int) {
        counters.skippedMilliseconds += milliseconds(dropAheadToTarget(waitedFrameCount: waitedFrameCount))
    }

    /// Drops what `skipStale` describes; returns the frames dropped (latency control starts over when any).
    private func dropAheadToTarget(waitedFrameCount: Int) -> Int {
        let target = targetFrameCount
        var ahead = aheadFrameCount + waitedFrameCount
        var skipped = 0
        let staged = stagingEnd - stagingStart
        if staged > 0, ahead - staged >= target {
            stagingStart = stagingEnd
            ahead -= staged
            skipped += staged
        }
        while nextSequence < highestSequence {
            let slot = Int(nextSequence & Int64(mask))
            let held = isHeld(nextSequence)
            let frameCount = held ? slotFrameCount[slot] : lastPacketFrameCount
            guard ahead - frameCount >= target else { break }
            if held {
                release(slot, as: .missed)
            } else if hasPlayed {
                counters.lost += 1
            }
            ahead -= frameCount
            skipped += frameCount
            nextSequence += 1
        }
        if skipped > 0 { control.reset() }
        return skipped
    }

    /// A burst left a lasting excess too large to compress soon: the packet at `nextSequence` (what would play
    /// next) is decoded, everything after it down to the target dropped, and the next held packet plays,
    /// cross-faded in from that decoded continuation so the jump makes no click. Staged from 0 on return.
    private func skipBurst() {
        let fadeOutFrameCount = decodeHeld(nextSequence, at: 0)
        nextSequence += 1
        let dropped = dropAheadToTarget(waitedFrameCount: waitedFrameCount)
        guard isHeld(nextSequence), dropped > 0 else {
            // Nothing dropped, or the packet after the skip is missing: play the decoded continuation as is.
            counters.burstSkippedMilliseconds += milliseconds(dropped)
            stagingEnd = fadeOutFrameCount
            control.reset()
            return
        }
        let decoded = decodeHeld(nextSequence, at: fadeOutFrameCount)
        nextSequence += 1
        let base = staging.baseAddress!
        let fade = min(burstCrossfadeFrameCount, fadeOutFrameCount, decoded)
        for index in 0..<fade {
            let weight = Float(index + 1) / Float(fade + 1)
            base[fadeOutFrameCount + index] = weight * base[fadeOutFrameCount + index] + (1 - weight) * base[index]
        }
        base.update(from: base + fadeOutFrameCount, count: decoded)
        stagingEnd = decoded
        counters.burstSkippedMilliseconds += milliseconds(dropped + fadeOutFrameCount)
    }

    /// Decodes the packet at `nextSequence` into the staging area, then lets latency control shorten or stretch
    /// it.
    private func playHeld() {
        let slot = Int(nextSequence & Int64(mask))
        // Like the start rule: the audio ahead plus the time the newest packet has waited, which grows when
        // concealment was played while a packet was late.
        observeLevel(decodedFrameCount: slotFrameCount[slot])
        stagingStart = 0
        mayExpand = true
        if control.surplusFrameCount > burstSkipFrameCount {
            skipBurst()
            return
        }
        let isDTX = slotByteCount[slot] <= 2
        stagingEnd = decodeHeld(nextSequence, at: 0)
        nextSequence += 1
        if control.surplusFrameCount > 0 { shortenStaged(isDTX: isDTX) }
    }

    /// Tells latency control the level now: the audio ahead plus the time the newest packet has waited. Its
    /// tolerance is the puller's block, the larger of its last two pulls (a device's chain may top a period up
    /// with a tiny second pull).
    private func observeLevel(decodedFrameCount: Int) {
        control.observe(aheadFrameCount: aheadFrameCount + waitedFrameCount, targetFrameCount: targetFrameCount,
                        decodedFrameCount: decodedFrameCount,
                        toleranceFrameCount: max(lastPullFrameCount, previousPullFrameCount),
                        packetFrameCount: lastPacketFrameCount)
    }

    /// Nothing held while playing: before concealing, plays the last pitch period of the frame just played once
    /// more (it is still in the staging area), so a packet a few milliseconds late plays on without a gap or
    /// concealment. Once per decoded packet; returns whether it staged anything.
    private func expandLastFrame(playedFrameCount: Int) -> Bool {
        guard mayExpand, playedFrameCount > 0 else { return false }
        mayExpand = false
        let count = stretcher.expand(staging, count: playedFrameCount, maxAddedFrameCount: playedFrameCount / 2)
        guard count > playedFrameCount else { return false }
        stagingStart = playedFrameCount
        stagingEnd = count
        counters.expandedMilliseconds += milliseconds(count - playedFrameCount)
        return true
    }

    /// Removes part of the surplus from the staged frames: silence is cut, speech time-compressed.
    private func shortenStaged(isDTX: Bool) {
        if isDTX || LatencyController.isSilent(UnsafeMutableBufferPointer(rebasing: staging[..<stagingEnd])) {
            let removed = control.silenceRemoval(frameCount: stagingEnd)
            stagingStart = removed
            control.removed(removed)
            counters.silenceDroppedMilliseconds += milliseconds(removed)
            return
        }
        guard control.speechRemoval(frameCount: stagingEnd) > 0 else { return }
        // Compression needs two pitch periods: take the next packet along when this one is short.
        if stagingEnd < 2 * stretcher.maxPeriodFrameCount, isHeld(nextSequence) {
            stagingEnd += decodeHeld(nextSequence, at: stagingEnd)
            nextSequence += 1
        }
        let count = stretcher.accelerate(staging, count: stagingEnd,
                                         maxRemovedFrameCount: control.speechRemoval(frameCount: stagingEnd))
        control.removed(stagingEnd - count)
        counters.acceleratedMilliseconds += milliseconds(stagingEnd - count)
        stagingEnd = count
    }

    /// Nothing to play: silence before the first packet, concealment after, of just the frames missing when
    /// Opus can conceal that span (whole 2.5 ms), so nothing concealed is left staged to delay the next packet.
    /// Counts one underrun.
    private func fillWhileDry(_ pcm: UnsafeMutableBufferPointer<Float>, from written: Int) {
        counters.underruns += 1
        skipOnResume = false
        let missing = pcm.count - written
        guard hasPlayed else {
            UnsafeMutableBufferPointer(rebasing: pcm[written...]).update(repeating: 0)
            return
        }
        let quantum = sampleRate / 400
        conceal(frameCount: missing % quantum == 0 && missing <= maxPacketFrameCount ? missing : lastPacketFrameCount)
        noteConcealed(frameCount: stagingEnd)
        let count = min(missing, stagingEnd)
        (pcm.baseAddress! + written).update(from: staging.baseAddress!, count: count)
        stagingStart = count
        if written + count < pcm.count { UnsafeMutableBufferPointer(rebasing: pcm[(written + count)...]).update(repeating: 0) }
    }

    /// Decodes held `sequence` into the staging area from `offset`; returns the frames decoded.
    private func decodeHeld(_ sequence: Int64, at offset: Int) -> Int {
        let slot = Int(sequence & Int64(mask))
        let frameCount = slotFrameCount[slot]
        let target = UnsafeMutableBufferPointer(rebasing: staging[offset..<(offset + frameCount)])
        var decoded: Int
        do {
            decoded = try decoder.decode(payload(slot), into: target)
        } catch {
            counters.invalid += 1
            decoded = conceal(into: target)
        }
        lastPacketFrameCount = frameCount
        hasPlayed = true
        release(slot, as: .played)
        endConcealment()
        return decoded
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
        stagingEnd = conceal(into: UnsafeMutableBufferPointer(rebasing: staging[..<frameCount]))
    }

    private func conceal(into buffer: UnsafeMutableBufferPointer<Float>) -> Int {
        do { return try decoder.conceal(into: buffer) } catch {
            buffer.update(repeating: 0)
            return buffer.count
        }
    }

    // MARK: Slots

    private func isHeld(_ sequence: Int64) -> Bool {
        let slot = Int(sequence & Int64(mask))
        return slotSequence[slot] == sequence && slotState[slot] == .filled
    }

    private func release(_ slot: Int, as state: SlotState) {
        heldFrameCount -= slotFrameCount[slot]
        heldPacketCount -= 1
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
