/// The unit's settable properties, as named to listeners.
public enum VoiceProcessingProperty: String, Sendable, CaseIterable {
    case bypassVoiceProcessing
    case enableAGC
    case duckOthers
    case duckingLevel
    case duckingMode
    case muteOutput
    case inputMuted
    /// The device's format (rate, period) changed, e.g. when the unit opened it.
    case deviceFormat
}

/// When other audio is ducked while `duckOthers` is on.
public enum DuckingMode: UInt8, Sendable, CaseIterable {
    /// Ducked for as long as the unit runs (Apple's default behaviour).
    case always
    /// Ducked only while the far end or the near end talks, with attack and release ramps.
    case voiceActivity
}
