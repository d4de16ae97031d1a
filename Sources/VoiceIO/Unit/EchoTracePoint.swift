/// What the echo canceller knew over one span of an offline run (see `OfflineVoiceProcessor.trace`).
public struct EchoTracePoint: Sendable, Hashable, Codable {
    /// End of the span, in seconds from the start of the recording.
    public var endSeconds: Double
    /// Bulk delay applied to the reference at the end of the span, in milliseconds.
    public var delayMilliseconds: Double
    /// The echo's strongest arrival behind the reference, in milliseconds (nil: not found yet).
    public var arrivalMilliseconds: Double?
    /// Clock drift being compensated, in ppm (nil: not known yet).
    public var driftPPM: Double?
    /// Smoothed echo return loss enhancement of the whole stage while the far end plays, in dB.
    public var erleDB: Double
    /// The linear filter's own enhancement over the span's blocks with far-end signal, in dB (0: none).
    public var linearERLEDB: Double
    /// Mean power the residual echo suppressor removed per block over the span, in dB (negative).
    public var suppressionDB: Double
    /// Fraction of the span's blocks judged double talk, 0 ... 1.
    public var doubleTalkFraction: Double

    enum CodingKeys: String, CodingKey {
        case endSeconds = "t_s", delayMilliseconds = "delay_ms", arrivalMilliseconds = "arrival_ms"
        case driftPPM = "drift_ppm", erleDB = "erle_db", linearERLEDB = "linear_erle_db"
        case suppressionDB = "suppression_db", doubleTalkFraction = "double_talk_fraction"
    }
}
