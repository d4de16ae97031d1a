import Glibc

/// Runs the unit's capture chain over whole recordings: a microphone and the loudspeaker signal (the echo
/// reference) at the device rate, sample `i` of both being the same instant, into processed voice at the voice
/// rate. What `voicepeer process` uses; the same code path as a running `VoiceProcessingIO`.
///
/// The output is aligned with the microphone: the conversion and processing latencies are removed, so output
/// frame `j` is the microphone around frame `j × deviceRate / voiceRate`. Not real-time (it works on arrays).
public final class OfflineVoiceProcessor {
    public let deviceRate: Int
    public let voiceFormat: StreamFormat
    /// Frames per device period fed at a time (10 ms).
    public let periodFrames: Int
    /// The processing stage's block, in milliseconds (`VoiceProcessingSettings.processingBlockMilliseconds`): 10, or
    /// 5 as a call's unit runs (`CallEndpoint.unitSettings`).
    public let processingBlockMilliseconds: Int
    private let chain: CaptureChain
    private let output: SPSCRing<Float>

    /// Device-rate frames by which the echo reference is taken ahead of the loudspeaker recording: loudspeaker
    /// frame `i + referenceLeadFrames` goes with microphone frame `i`.
    public let referenceLeadFrames: Int

    /// `referenceLeadFrames`: 0 for a loudspeaker recording of what was played when (the yardstick's). A running
    /// unit gets each period's playback as it renders it, the device's playback delay before it sounds, so its
    /// reference leads what the loudspeaker plays by that delay; give that delay here (a simulated room's
    /// recordings: one period) to replay a live run as the unit saw it. The echo canceller's result can depend on
    /// when in the signal it locks and starts adapting (on sustained music, by several dB), so a replay without
    /// the lead need not give the live figures. `processingBlockMilliseconds`: one of
    /// `VoiceProcessingSettings.processingBlockDurations` (otherwise `VoiceProcessingError.unsupportedBlock`).
    public init(deviceRate: Int, voiceRate: Int, settings: EchoPipelineSettings = .init(), referenceLeadFrames: Int = 0,
                processingBlockMilliseconds: Int = 10) throws(VoiceProcessingError) {
        try VoiceProcessingSettings.validate(processingBlockMilliseconds: processingBlockMilliseconds)
        self.processingBlockMilliseconds = processingBlockMilliseconds
        do {
            voiceFormat = try StreamFormat.voice(sampleRate: voiceRate)
            _ = try StreamFormat(sampleRate: deviceRate)
        } catch {
            throw .format(error)
        }
        self.deviceRate = deviceRate
        self.referenceLeadFrames = max(referenceLeadFrames, 0)
        periodFrames = max(deviceRate / 100, 1)
        do {
            // As a running unit, which starts from the device's reported delay.
            chain = try CaptureChain(deviceRate: deviceRate, voiceRate: voiceRate, maximumPeriodFrames: periodFrames,
                                     blockMilliseconds: processingBlockMilliseconds, settings: settings,
                                     initialDelayFrames: self.referenceLeadFrames)
        } catch {
            throw .speex(error)
        }
        output = SPSCRing(minimumCapacity: 4 * voiceRate / 100 + 64, filledWith: 0)
    }

    /// Skips the processing stage (conversion only).
    public var bypass = false
    /// Gain control on the processed voice.
    public var enableAGC = true

    /// Smoothed ERLE at the end of the last run, in dB.
    public var erleDB: Float { chain.erleDB }
    /// The stage's ERLE over every run so far: the blocks counted (reference active, no double talk) and skipped.
    public var erle: ERLEReport { chain.erle.report }
    /// Bulk delay applied to the reference at the end of the last run, in milliseconds.
    public var delayMilliseconds: Float { chain.delayMilliseconds }
    /// Whether the delay was estimated (false: no reliable correlation peak was found).
    public var isDelayEstimated: Bool { chain.aligner.realignmentCount > 0 }
    /// Clock drift compensated at the end of the last run, in ppm (nil: none found, or clocks that agree: under 20
    /// ppm, `EchoAligner.driftPPM`).
    public var driftPPM: Double? { chain.aligner.driftPPM }
    /// Times the reference delay moved to a new echo arrival (first lock included).
    public var realignmentCount: Int { chain.aligner.realignmentCount }
    /// The level at which the loudspeaker was found to saturate (clip or soft-clip), in dBFS at the end of the last
    /// run; nil while it is taken for linear.
    public var loudspeakerKneeDBFS: Double? {
        chain.pipeline.loudspeakerKneeLevel.map { 20 * log10(Double($0)) }
    }
    /// The echo tail the linear filter covered at the end of the last run, in milliseconds: longer than it started
    /// when the room rang past it (`EchoPipeline.echoFilterMilliseconds`).
    public var echoFilterMilliseconds: Double { chain.pipeline.echoFilterMilliseconds }
    /// Times the linear filter was found misadjusted (echo-path change) and started over.
    public var divergenceResetCount: Int { chain.pipeline.divergenceResetCount }
    /// Times the echo came back as the linear filter had it, only later or sooner (an audio server's xrun), and the
    /// filter's path moved with it instead of starting over (`EchoShiftFinder`).
    public var pathShiftCount: Int { chain.pipeline.pathShiftCount }
    /// Whether the echo canceller found no echo to cancel (`EchoPipeline.isNoEchoFound`): a headset's microphone.
    public var isNoEchoFound: Bool { chain.pipeline.isNoEchoFound }
    /// What the engine knew over the last run, one point per `traceIntervalSeconds`.
    public private(set) var trace: [EchoTracePoint] = []
    /// Span of one `trace` point, in seconds.
    public var traceIntervalSeconds = 0.5
    /// Fraction of the last run's processed blocks judged double talk.
    public var doubleTalkFraction: Double {
        chain.blockCount > 0 ? Double(chain.doubleTalkBlockCount) / Double(chain.blockCount) : 0
    }

    /// Processes `microphone` against `loudspeaker` (shorter one zero-padded to the microphone's length) and
    /// returns the processed voice, `microphone.count × voiceRate / deviceRate` frames.
    public func process(microphone: [Float], loudspeaker: [Float]) -> [Float] {
        var result = [Float]()
        result.reserveCapacity(microphone.count * voiceFormat.sampleRate / deviceRate)
        process(microphone: microphone, loudspeaker: loudspeaker) { result.append(contentsOf: $0) }
        return result
    }

    /// Like `process(microphone:loudspeaker:)`, handing the processed voice to `deliver` in order, a period's
    /// worth at a time, as it is produced (so a caller can write it to a file as it goes); stops at `deliver`'s
    /// first error.
    public func process<Failure: Error>(microphone: [Float], loudspeaker: [Float],
                                        deliver: (UnsafeBufferPointer<Float>) throws(Failure) -> Void) throws(Failure) {
        let expected = microphone.count * voiceFormat.sampleRate / deviceRate
        let latency = chain.latencyFrames + (bypass ? 0 : chain.processingLatencyFrames)
        var producedCount = 0
        var periodMicrophone = [Float](repeating: 0, count: periodFrames)
        var periodLoudspeaker = [Float](repeating: 0, count: periodFrames)
        var drained = [Float](repeating: 0, count: output.capacity)
        var start = 0
        var dropped = 0
        trace = []
        var spanStart = (blocks: chain.blockCount, doubleTalk: chain.doubleTalkBlockCount,
                         suppression: chain.suppressionSumDB, linear: chain.pipeline.linearERLE.report.processing)
        let spanFrames = max(Int(traceIntervalSeconds * Double(deviceRate)), periodFrames)
        while producedCount < expected + latency {
            // The period's frames of both recordings, the loudspeaker's `referenceLeadFrames` ahead; zeros past the
            // microphone's end (and the loudspeaker's).
            let microphoneFrames = min(periodFrames, max(microphone.count - start, 0))
            let referenceStart = start + referenceLeadFrames
            let loudspeakerFrames = min(microphoneFrames, max(loudspeaker.count - referenceStart, 0))
            periodMicrophone.withUnsafeMutableBufferPointer { period in
                if microphoneFrames > 0 { _ = period.update(fromContentsOf: microphone[start..<(start + microphoneFrames)]) }
                period[microphoneFrames...].update(repeating: 0)
            }
            periodLoudspeaker.withUnsafeMutableBufferPointer { period in
                if loudspeakerFrames > 0 {
                    _ = period.update(fromContentsOf: loudspeaker[referenceStart..<(referenceStart + loudspeakerFrames)])
                }
                period[loudspeakerFrames...].update(repeating: 0)
            }
            start += periodFrames
            periodMicrophone.withUnsafeBufferPointer { capture in
                periodLoudspeaker.withUnsafeBufferPointer { reference in
                    _ = chain.process(capture: capture, reference: reference, bypass: bypass, agc: enableAGC,
                                      output: output, droppedFrames: &dropped)
                }
            }
            let count = drained.withUnsafeMutableBufferPointer { output.read(into: $0) }
            // Of this block, the frames in [latency, latency + expected) of the whole output.
            let keptStart = min(max(latency - producedCount, 0), count)
            let kept = keptStart..<max(min(latency + expected - producedCount, count), keptStart)
            producedCount += count
            if !kept.isEmpty { try drained[kept].withUnsafeBufferPointer { (frames) throws(Failure) in try deliver(frames) } }
            if start % spanFrames < periodFrames {
                let blocks = max(chain.blockCount - spanStart.blocks, 1)
                let toMilliseconds = 1000 / Double(voiceFormat.sampleRate)
                let linear = chain.pipeline.linearERLE.report.processing
                trace.append(EchoTracePoint(
                    endSeconds: Double(start) / Double(deviceRate),
                    delayMilliseconds: chain.aligner.delayFrames * toMilliseconds,
                    arrivalMilliseconds: chain.aligner.arrivalFrames.map { $0 * toMilliseconds },
                    driftPPM: chain.aligner.driftPPM, erleDB: Double(chain.erleDB),
                    linearERLEDB: linear.since(spanStart.linear).decibels ?? 0,
                    suppressionDB: (chain.suppressionSumDB - spanStart.suppression) / Double(blocks),
                    doubleTalkFraction: Double(chain.doubleTalkBlockCount - spanStart.doubleTalk) / Double(blocks)))
                spanStart = (chain.blockCount, chain.doubleTalkBlockCount, chain.suppressionSumDB, linear)
            }
        }
    }
}
