import VoiceIO
import VoiceIOSimulation

extension SplitMix64 {
    /// True with probability `percent` / 100.
    mutating func chance(_ percent: Double) -> Bool { Double.random(in: 0..<100, using: &self) < percent }
}
