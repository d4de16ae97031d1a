/// Apple's ducking presets for other audio (`AUVoiceIOOtherAudioDuckingConfiguration`), over the unit's own
/// `duckingLevelDB` and `duckingMode`.
public struct OtherAudioDuckingConfiguration: Sendable, Hashable {
    /// How far other audio is lowered.
    public enum Level: String, Sendable, CaseIterable {
        case `default`, min, mid, max

        /// The level in dB: default -15 (the unit's default), min -6, mid -12, max -25.
        public var decibels: Float {
            switch self {
            case .default: -15
            case .min: -6
            case .mid: -12
            case .max: -25
            }
        }
    }

    /// Advanced ducking: duck only while someone talks (the unit's `.voiceActivity` mode), else all the time.
    public var enableAdvancedDucking: Bool
    public var duckingLevel: Level

    public init(enableAdvancedDucking: Bool = false, duckingLevel: Level = .default) {
        self.enableAdvancedDucking = enableAdvancedDucking
        self.duckingLevel = duckingLevel
    }
}

extension VoiceProcessingIO {
    /// Ducking as Apple's presets. Setting it turns `duckOthers` on and sets `duckingLevelDB` and `duckingMode`;
    /// reading it maps them back (a dB level that is no preset reads as `.default`). Any thread; real-time safe
    /// as the properties it sets are.
    public var otherAudioDuckingConfiguration: OtherAudioDuckingConfiguration {
        get {
            OtherAudioDuckingConfiguration(
                enableAdvancedDucking: duckingMode == .voiceActivity,
                duckingLevel: OtherAudioDuckingConfiguration.Level.allCases.first { $0.decibels == duckingLevelDB }
                    ?? .default)
        }
        set {
            duckingLevelDB = newValue.duckingLevel.decibels
            duckingMode = newValue.enableAdvancedDucking ? .voiceActivity : .always
            duckOthers = true
        }
    }
}
