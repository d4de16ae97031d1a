import Glibc

/// How many processing blocks make a second, for the per-block watchers that count seconds (`EchoPresence`,
/// `ExplainedShare`, `LeakedEchoWatch`): a call's 5 ms blocks then wait and smooth as long as `process`'s 10 ms ones.
struct BlockRate {
    /// Processing blocks per second (100 for 10 ms blocks).
    let blocksPerSecond: Double

    /// The blocks in `seconds`, rounded.
    func blocks(seconds: Double) -> Int { Int((seconds * blocksPerSecond).rounded()) }

    /// A block's weight in a one-pole average with a time constant of `seconds` (at most 1).
    func smoothingWeight(seconds: Double) -> Float { Float(min(1, 1 / (seconds * blocksPerSecond))) }

    /// What a block keeps of a value that decays with a time constant of `seconds`: exp(−1 / blocks in `seconds`).
    func decayPerBlock(seconds: Double) -> Float { Float(exp(-1 / (seconds * blocksPerSecond))) }
}
