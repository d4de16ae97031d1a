/// The mean of the last few blocks' values, four at a time: what a reading tuned on 10 ms blocks takes from shorter
/// ones (over the last 10 ms, `BlockRate.blocksPerTunedBlock`, or over the 20 ms a 10 ms block's window spans,
/// `BlockRate.blocksPerTunedWindow`). `add` is real-time safe.
struct TunedBlockMean {
    /// Blocks averaged, 1 ... 4.
    let blockCount: Int
    private var recent = InlineArray<4, SIMD4<Float>>(repeating: .zero)
    private var nextIndex = 0

    init(blockCount: Int) {
        precondition((1...4).contains(blockCount), "TunedBlockMean averages 1 to 4 blocks")
        self.blockCount = blockCount
    }

    /// Takes this block's values and returns the mean over the last `blockCount` blocks (blocks before the first count
    /// as zero). Real-time safe.
    mutating func add(_ values: SIMD4<Float>) -> SIMD4<Float> {
        recent[nextIndex] = values
        nextIndex = (nextIndex + 1) % blockCount
        var sum = SIMD4<Float>.zero
        for index in 0..<blockCount { sum += recent[index] }
        return sum / Float(blockCount)
    }
}
