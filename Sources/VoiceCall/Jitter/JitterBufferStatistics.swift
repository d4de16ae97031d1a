/// What a jitter buffer has seen and done. Counts run from creation (a sender restart does not clear them).
/// Plain values: copy it off the audio thread through an SPSC ring or read it on the thread that owns the buffer.
public struct JitterBufferStatistics: Sendable, Hashable, BitwiseCopyable, Codable {
    /// Audio ahead of playout now (decoded frames not yet played, packets waiting and, while playing, the
    /// missing packets between them, which will be concealed), in milliseconds.
    public var delayMilliseconds: Double = 0
    /// The delay the buffer aims for, following the measured jitter, in milliseconds.
    public var targetDelayMilliseconds: Double = 0
    /// Packets accepted into the buffer.
    public var received = 0
    /// Sequence numbers skipped at playout because their packet had not arrived.
    public var lost = 0
    /// Lost packets replaced by Opus packet loss concealment (also those whose turn passed while the buffer ran
    /// dry and played concealment).
    public var concealed = 0
    /// Lost packets rebuilt from the in-band FEC of the packet after them.
    public var fecRecovered = 0
    /// Packets that arrived after their turn to play had passed; dropped.
    public var late = 0
    /// Second copies of a packet already held or played; dropped.
    public var duplicates = 0
    /// Pulls that found nothing to play (before the first packet, after DTX silence, or when starved):
    /// silence or concealment was played and the buffer refilled to its target.
    public var underruns = 0
    /// Packets dropped, oldest first, because a burst exceeded the buffer's capacity.
    public var overflowDrops = 0
    /// Audio dropped at once, oldest first, when playout (re)started or the puller came back from a pause
    /// (a device that started late or stalled): what piled up beyond the target while nothing was consumed, in
    /// milliseconds.
    public var skippedMilliseconds: Double = 0
    /// Audio dropped at once while playing because a lasting excess over the target went beyond
    /// `JitterBuffer.burstSkipMilliseconds` (a backlog that arrived in a burst), the jump cross-faded, in
    /// milliseconds.
    public var burstSkippedMilliseconds: Double = 0
    /// Audio removed from silent (or DTX) frames to bring a lasting excess over the target back down, in ms.
    public var silenceDroppedMilliseconds: Double = 0
    /// Audio removed from speech by time compression (whole pitch periods, "accelerate"), in milliseconds.
    public var acceleratedMilliseconds: Double = 0
    /// Audio added by stretching (the last pitch period played once more, "expand") when the buffer ran dry
    /// while playing, before any concealment, in milliseconds.
    public var expandedMilliseconds: Double = 0
    /// Times the puller came back after not pulling for longer than `JitterBuffer.pullGapMilliseconds`.
    public var pullGaps = 0
    /// Payloads that were not valid Opus or too long for a slot; dropped.
    public var invalid = 0
    /// The longest stretch of concealment played between two decoded (or FEC-recovered) packets, in
    /// milliseconds: after an outage, the outage plus the time playout took to resume (DTX pauses count too).
    public var longestConcealmentMilliseconds: Double = 0
    /// Times a new SSRC replaced the stream being played (the buffer and decoder were reset).
    public var restarts = 0

    public init() {}

    /// Audio removed to keep the delay at its target (skipped, burst skipped, silence dropped, accelerated), in
    /// milliseconds.
    public var removedMilliseconds: Double {
        skippedMilliseconds + burstSkippedMilliseconds + silenceDroppedMilliseconds + acceleratedMilliseconds
    }
}
