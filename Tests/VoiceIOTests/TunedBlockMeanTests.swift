import Testing
@testable import VoiceIO

@Suite struct TunedBlockMeanTests {
    /// At 10 ms blocks the mean is the block's own values (bit for bit: the 10 ms stage is unchanged); at 5 ms it is
    /// the last two blocks', the one before the first counting as zero.
    @Test func averagesTheLastTenMilliseconds() {
        var single = TunedBlockMean(blockCount: BlockRate(blocksPerSecond: 100).blocksPerTunedBlock)
        #expect(single.add(SIMD4(0.3, 7, 1e-9, 0)) == SIMD4(0.3, 7, 1e-9, 0))
        #expect(single.add(SIMD4(1, 2, 3, 4)) == SIMD4(1, 2, 3, 4))
        var pair = TunedBlockMean(blockCount: BlockRate(blocksPerSecond: 200).blocksPerTunedBlock)
        #expect(pair.add(SIMD4(2, 4, 6, 8)) == SIMD4(1, 2, 3, 4))
        #expect(pair.add(SIMD4(4, 0, 2, 0)) == SIMD4(3, 2, 4, 4))
        #expect(pair.add(SIMD4(0, 0, 0, 0)) == SIMD4(2, 0, 1, 0))
    }

    /// The blocks whose windows span a 10 ms block's 20 ms window: the block itself at 10 ms, three at 5 ms.
    @Test func blocksSpanningTheTunedWindow() {
        #expect(BlockRate(blocksPerSecond: 100).blocksPerTunedWindow == 1)
        #expect(BlockRate(blocksPerSecond: 200).blocksPerTunedWindow == 3)
    }

    /// A step per 10 ms block is itself at 10 ms blocks, and at 5 ms the step that covers as much per second.
    @Test func stepsPerTunedBlockCoverTheSameTime() {
        #expect(BlockRate(blocksPerSecond: 100).step(perTunedBlock: 0.05) == 0.05)
        let half = BlockRate(blocksPerSecond: 200).step(perTunedBlock: 0.05)
        #expect(abs((1 - half) * (1 - half) - 0.95) < 1e-6)
    }
}
