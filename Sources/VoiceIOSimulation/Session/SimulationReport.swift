import VoiceIO

/// What one run of a ``SimulationSession`` (`voicepeer simulate --report`) measured: the device and rates, the
/// unit's statistics at the end (ERLE smoothed and over the far end's talk, the echo delay found, levels, xruns),
/// the echo delay the room put in (on a ``SimulatedRoom``) or the device's own delay, and the levels while the far
/// end talked. Written as JSON with `ReportJSON`. Not real-time safe.
public struct SimulationReport: Sendable, Equatable, Codable {
    /// Mean levels while the far end was audible (``FarTalkLevels``), in dBFS RMS.
    public struct FarTalk: Sendable, Equatable, Codable {
        public var snapshots: Int
        public var microphoneDBFS: Double
        public var processedDBFS: Double
        public var farDBFS: Double
    }

    public var device: String
    public var deviceRate: Int
    /// Frames per I/O cycle and frames of playback buffering the device runs with.
    public var periodFrames: Int
    public var bufferFrames: Int
    public var voiceRate: Int
    /// Length of the run, in seconds.
    public var seconds: Double
    public var bypass: Bool
    public var unit: VoiceProcessingStatistics
    /// The echo delay the simulated room put in (bulk delay plus one period), in milliseconds; nil on another device.
    public var roomEchoDelayMilliseconds: Double?
    /// The device's own playback plus capture delay, in milliseconds (as it reports them).
    public var deviceReportedDelayMilliseconds: Double
    /// Nil when the far end was never audible.
    public var farTalk: FarTalk?

    /// Reads what `session` and its unit know after ``SimulationSession/run(periods:seconds:progress:)``.
    public init(session: SimulationSession, seconds: Double) {
        let unit = session.unit
        let rate = Double(unit.deviceConfiguration.sampleRate)
        device = unit.device.name
        deviceRate = unit.deviceConfiguration.sampleRate
        periodFrames = unit.deviceConfiguration.periodFrames
        bufferFrames = unit.deviceConfiguration.bufferFrames
        voiceRate = unit.voiceFormat.sampleRate
        self.seconds = seconds
        bypass = unit.bypassVoiceProcessing
        self.unit = unit.statistics
        roomEchoDelayMilliseconds = (unit.device as? SimulatedRoom).map { Double($0.echoDelayFrames) * 1000 / rate }
        let timing = unit.device.timing
        deviceReportedDelayMilliseconds = Double(timing.playbackDelayFrames + timing.captureDelayFrames) * 1000 / rate
        let levels = session.farTalkLevels
        farTalk = levels.snapshotCount == 0 ? nil : FarTalk(
            snapshots: levels.snapshotCount, microphoneDBFS: levels.microphoneDBFS,
            processedDBFS: levels.processedDBFS, farDBFS: levels.farDBFS)
    }
}
