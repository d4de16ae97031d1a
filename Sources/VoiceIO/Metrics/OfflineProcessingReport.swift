/// What one offline run (`OfflineVoiceProcessor`, `voicepeer process --stats`) measured: its settings, the echo
/// canceller's state at the end, the ERLE over the run (gated, with what it skipped), the CPU it took, and the
/// trace over time. Written as JSON with `ReportJSON` (the keys `voicepeer process --stats` has always written).
public struct OfflineProcessingReport: Sendable, Hashable, Codable {
    public var voiceRate: Int
    public var deviceRate: Int
    /// Processed frames written, at the voice rate.
    public var frames: Int
    public var bypass: Bool
    public var agc: Bool
    public var ns: Bool
    /// The processing stage's block, in milliseconds.
    public var processingBlockMilliseconds: Int
    /// Smoothed ERLE at the end of the run, in dB.
    public var erleDB: Double
    /// ERLE over the whole run: counted and skipped blocks.
    public var erle: ERLEReport
    public var delayMilliseconds: Double
    public var delayEstimated: Bool
    public var driftPPM: Double?
    public var doubleTalkFraction: Double
    public var realignments: Int
    public var divergenceResets: Int
    /// Times the echo came back as the filter had it, only later or sooner, and the filter's path moved with it
    /// (`OfflineVoiceProcessor.pathShiftCount`).
    public var pathShifts: Int
    /// The echo tail the linear filter covered at the end, in milliseconds (grown in a room that rings past it).
    public var echoFilterMilliseconds: Double
    /// Whether the echo canceller had found no echo to cancel at the end (`OfflineVoiceProcessor.isNoEchoFound`).
    public var noEchoFound: Bool
    /// The level at which the loudspeaker was found to saturate, in dBFS (absent: taken for linear).
    public var loudspeakerKneeDBFS: Double?
    /// CPU time of the processing loop, in seconds.
    public var cpuSeconds: Double
    public var trace: [EchoTracePoint]

    enum CodingKeys: String, CodingKey {
        case voiceRate = "voice_rate", deviceRate = "device_rate", frames, bypass, agc, ns, erleDB = "erle_db", erle
        case processingBlockMilliseconds = "block_ms"
        case delayMilliseconds = "delay_ms", delayEstimated = "delay_estimated", driftPPM = "drift_ppm"
        case doubleTalkFraction = "double_talk_fraction", realignments, divergenceResets = "divergence_resets"
        case pathShifts = "path_shifts"
        case echoFilterMilliseconds = "echo_filter_ms"
        case noEchoFound = "no_echo_found"
        case loudspeakerKneeDBFS = "loudspeaker_knee_dbfs", cpuSeconds = "cpu_seconds", trace
    }

    /// Reads what `processor` knows after a run. Not real-time safe.
    public init(processor: OfflineVoiceProcessor, frames: Int, isNoiseSuppressionEnabled: Bool, cpuSeconds: Double) {
        voiceRate = processor.voiceFormat.sampleRate
        deviceRate = processor.deviceRate
        self.frames = frames
        bypass = processor.bypass
        agc = processor.enableAGC
        ns = isNoiseSuppressionEnabled
        processingBlockMilliseconds = processor.processingBlockMilliseconds
        erleDB = Double(processor.erleDB)
        erle = processor.erle
        delayMilliseconds = Double(processor.delayMilliseconds)
        delayEstimated = processor.isDelayEstimated
        driftPPM = processor.driftPPM
        doubleTalkFraction = processor.doubleTalkFraction
        realignments = processor.realignmentCount
        divergenceResets = processor.divergenceResetCount
        pathShifts = processor.pathShiftCount
        echoFilterMilliseconds = processor.echoFilterMilliseconds
        noEchoFound = processor.isNoEchoFound
        loudspeakerKneeDBFS = processor.loudspeakerKneeDBFS
        self.cpuSeconds = cpuSeconds
        trace = processor.trace
    }
}
