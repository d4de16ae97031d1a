import VoiceIO

/// A small seeded random number generator (SplitMix64): the same seed gives the same sequence on every run and
/// machine, so generated audio, simulated networks and randomised tests can be repeated exactly.
/// Real-time safe.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in 0..<1 with 53 random bits.
    public mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}
