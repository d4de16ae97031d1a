import Testing
@testable import VoiceIO

@Suite struct BlockRateTests {
    /// A step per 10 ms block is itself at 10 ms blocks, and at 5 ms the step that covers as much per second.
    @Test func stepsPerTunedBlockCoverTheSameTime() {
        #expect(BlockRate(blocksPerSecond: 100).step(perTunedBlock: 0.05) == 0.05)
        let half = BlockRate(blocksPerSecond: 200).step(perTunedBlock: 0.05)
        #expect(abs((1 - half) * (1 - half) - 0.95) < 1e-6)
    }
}
