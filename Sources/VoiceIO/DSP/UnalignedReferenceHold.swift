/// The reference's power per frequency bin, held at its maximum over the current bucket of blocks and the one
/// before it: what the `ResidualEchoSuppressor` takes for echo while the reference's delay is not yet known (the
/// echo can then lag its reference by up to the delay estimator's range, one bucket).
///
/// `init` allocates; `add` and `held` are real-time safe.
final class UnalignedReferenceHold {
    /// Blocks per bucket.
    let bucketBlocks: Int
    private let laneBinCount: Int
    private let current: UnsafeMutablePointer<Float>
    private let previous: UnsafeMutablePointer<Float>
    private var blocksInBucket = 0

    /// `laneBinCount`: bins per power spectrum (whole `BinLanes`). Not real-time safe.
    init(laneBinCount: Int, bucketBlocks: Int) {
        self.laneBinCount = laneBinCount
        self.bucketBlocks = max(1, bucketBlocks)
        current = .zeroed(laneBinCount)
        previous = .zeroed(laneBinCount)
    }

    deinit {
        current.deallocate()
        previous.deallocate()
    }

    /// Adds one block's reference power spectrum to the held maximum; a full bucket becomes the previous one.
    /// Real-time safe.
    func add(power: UnsafeMutablePointer<Float>) {
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            store(maximum(lanes(current, k), lanes(power, k)), current, k)
        }
        blocksInBucket += 1
        guard blocksInBucket >= bucketBlocks else { return }
        blocksInBucket = 0
        previous.update(from: current, count: laneBinCount)
        current.update(repeating: 0, count: laneBinCount)
    }

    /// Bins k … k + 3 of the held power: the larger of the current and the previous bucket's. Real-time safe.
    @inline(__always) func held(_ k: Int) -> BinLanes { maximum(lanes(current, k), lanes(previous, k)) }
}
