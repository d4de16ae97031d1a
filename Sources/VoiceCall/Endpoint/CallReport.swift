import VoiceIO

/// The parts of a call's mouth-to-ear delay this endpoint can measure or knows, in milliseconds.
public struct CallLatency: Sendable, Hashable, Codable {
    /// Half the RTCP round-trip time (nil before the first report on our sender reports).
    public var networkOneWayMilliseconds: Double?
    public var jitterBufferMilliseconds: Double
    public var frameMilliseconds: Double
    public var encoderLookaheadMilliseconds: Double
    /// The unit's rate conversion, counted on both sides (capture here, playback at the far end alike).
    public var conversionMilliseconds: Double
    public var processingMilliseconds: Double
    /// The device's reported playback and capture delays (its buffers; 0 in a simulated room).
    public var devicePlaybackMilliseconds: Double
    public var deviceCaptureMilliseconds: Double
    /// Their sum (conversion twice), assuming the far end's capture side equals ours: the E-model's delay.
    public var mouthToEarMilliseconds: Double

    public init(networkOneWayMilliseconds: Double?, jitterBufferMilliseconds: Double, frameMilliseconds: Double,
                encoderLookaheadMilliseconds: Double, conversionMilliseconds: Double, processingMilliseconds: Double,
                devicePlaybackMilliseconds: Double, deviceCaptureMilliseconds: Double) {
        self.networkOneWayMilliseconds = networkOneWayMilliseconds
        self.jitterBufferMilliseconds = jitterBufferMilliseconds
        self.frameMilliseconds = frameMilliseconds
        self.encoderLookaheadMilliseconds = encoderLookaheadMilliseconds
        self.conversionMilliseconds = conversionMilliseconds
        self.processingMilliseconds = processingMilliseconds
        self.devicePlaybackMilliseconds = devicePlaybackMilliseconds
        self.deviceCaptureMilliseconds = deviceCaptureMilliseconds
        mouthToEarMilliseconds = (networkOneWayMilliseconds ?? 0) + jitterBufferMilliseconds + frameMilliseconds
            + encoderLookaheadMilliseconds + 2 * conversionMilliseconds + processingMilliseconds
            + devicePlaybackMilliseconds + deviceCaptureMilliseconds
    }
}

/// The E-model's verdict on a call, with what it was given.
public struct CallQuality: Sendable, Hashable, Codable {
    public var model: EModel
    public var rFactor: Double
    public var meanOpinionScore: Double

    public init(model: EModel) {
        self.model = model
        rFactor = model.rFactor
        meanOpinionScore = model.meanOpinionScore
    }
}

/// What one call measured, written by `voicepeer call --report` (with `ReportJSON`) at its end.
public struct CallReport: Sendable, Equatable, Codable {
    public var localAddress: String
    public var remoteAddress: String
    public var device: String
    public var deviceRate: Int
    public var voiceRate: Int
    public var codecRate: Int
    public var frameMilliseconds: Int
    public var bitsPerSecond: Int
    public var inbandFEC: Bool
    public var dtx: Bool
    /// From start to stop (or to now, for a report of a running call).
    public var seconds: Double
    public var stopReason: String?
    public var bypass: Bool
    public var bypassToggles: Int
    public var unit: VoiceProcessingStatistics
    public var call: CallStatistics
    public var echoGroundTruth: ERLEReport?
    public var latency: CallLatency
    public var quality: CallQuality
    public var recordings: [CallRecording]
    public var bypassEvents: String?
    /// Audio-thread time in the call's playout (jitter buffer, Opus decoding, conversion), in milliseconds.
    public var playoutMilliseconds: Double
    /// Audio-thread time the simulated room took, in milliseconds (set by whoever knows the room).
    public var roomSimulationMilliseconds: Double?
}
