/// Measures how late packets arrive relative to the earliest one in a sliding window: for each packet the
/// transit time (arrival minus RTP timestamp, in 48 kHz ticks, with an unknown constant offset) is kept for
/// the last `windowCount` packets; the delay needed to catch a given share of them is that percentile of
/// transit minus the smallest transit.
///
/// Storage is allocated in `init`; `add` and `delayTicks` are real-time safe (an insertion into a sorted
/// copy: O(window) moves, no allocation).
struct JitterEstimator: ~Copyable {
    private let windowCount: Int
    /// Transits in arrival order, as a ring.
    private let history: UnsafeMutablePointer<Int64>
    /// The same transits, sorted ascending.
    private let sorted: UnsafeMutablePointer<Int64>
    private var count = 0
    private var oldest = 0

    init(windowCount: Int) {
        precondition(windowCount > 0)
        self.windowCount = windowCount
        history = .allocate(capacity: windowCount)
        sorted = .allocate(capacity: windowCount)
    }

    deinit {
        history.deallocate()
        sorted.deallocate()
    }

    /// Packets measured so far, at most `windowCount`.
    var sampleCount: Int { count }

    mutating func add(transitTicks: Int64) {
        if count == windowCount {
            remove(history[oldest])
            history[oldest] = transitTicks
            oldest = (oldest + 1) % windowCount
        } else {
            history[(oldest + count) % windowCount] = transitTicks
        }
        insert(transitTicks)
    }

    mutating func reset() {
        count = 0
        oldest = 0
    }

    /// The delay, in ticks, that packets up to `percentile` (0 ... 1) of the window arrived within.
    func delayTicks(percentile: Double) -> Int64 {
        guard count > 1 else { return 0 }
        let index = min(count - 1, Int((Double(count - 1) * percentile).rounded(.up)))
        return sorted[index] - sorted[0]
    }

    /// First index in `sorted` whose value is not below `value`.
    private func lowerBound(_ value: Int64) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < value { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func insert(_ value: Int64) {
        let index = lowerBound(value)
        (sorted + index + 1).update(from: sorted + index, count: count - index)
        sorted[index] = value
        count += 1
    }

    private mutating func remove(_ value: Int64) {
        let index = lowerBound(value)
        (sorted + index).update(from: sorted + index + 1, count: count - index - 1)
        count -= 1
    }
}
