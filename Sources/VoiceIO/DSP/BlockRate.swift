import Glibc

/// How many processing blocks make a second, for the per-block watchers that count seconds (`EchoPresence`,
/// `ExplainedShare`, `LeakedEchoWatch`): a call's 5 ms blocks then wait and smooth as long as `process`'s 10 ms ones.
/// Weights and counts tuned per 10 ms block convert here too (`step(perTunedBlock:)`, `blocksPerTunedBlock`).
struct BlockRate {
    /// Processing blocks per second (100 for 10 ms blocks).
    let blocksPerSecond: Double

    /// The blocks in `seconds`, rounded.
    func blocks(seconds: Double) -> Int { Int((seconds * blocksPerSecond).rounded()) }

    /// A block's weight in a one-pole average with a time constant of `seconds` (at most 1).
    func smoothingWeight(seconds: Double) -> Float { Float(min(1, 1 / (seconds * blocksPerSecond))) }

    /// What a block keeps of a value that decays with a time constant of `seconds`: exp(−1 / blocks in `seconds`).
    func decayPerBlock(seconds: Double) -> Float { Float(exp(-1 / (seconds * blocksPerSecond))) }

    /// The block much of the stage was tuned on, in seconds (10 ms): weights and counts given per such block are
    /// converted with `blocksPerTunedBlock` and `step(perTunedBlock:)`.
    static let tunedBlockSeconds = 0.01

    /// Blocks in a tuned block (at least 1): 1 at 10 ms blocks, 2 at a call's 5 ms.
    var blocksPerTunedBlock: Int { max(1, blocks(seconds: Self.tunedBlockSeconds)) }

    /// The step of a one-pole average per block that moves as far per second as `step` per tuned block:
    /// 1 − (1 − `step`)^(blocks per tuned block); `step` itself at 10 ms blocks.
    func step(perTunedBlock step: Float) -> Float {
        Float(1 - pow(1 - Double(step), 1 / (Self.tunedBlockSeconds * blocksPerSecond)))
    }
}
