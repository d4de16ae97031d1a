/// Delays a mono stream by a whole number of frames that may change between blocks.
///
/// Storage is allocated once in `init` for delays up to `maximumDelayFrames` and blocks up to
/// `maximumBlockFrames`. Frames older than the first one written read as silence. `process` and `reset` are
/// real-time safe; one thread at a time.
public final class DelayLine {
    public let maximumDelayFrames: Int
    public let maximumBlockFrames: Int
    private let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Slot the next written frame goes to.
    private var head = 0

    /// Not real-time safe (allocates).
    public init(maximumDelayFrames: Int, maximumBlockFrames: Int) {
        precondition(maximumDelayFrames >= 0 && maximumBlockFrames > 0, "delay line sizes out of range")
        self.maximumDelayFrames = maximumDelayFrames
        self.maximumBlockFrames = maximumBlockFrames
        capacity = maximumDelayFrames + maximumBlockFrames
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0, count: capacity)
    }

    deinit { storage.deallocate() }

    /// Writes `input` and fills `output` (same count, at most `maximumBlockFrames`) with the stream as it was
    /// `delayFrames` frames earlier (clamped to 0...maximumDelayFrames). `output` may alias `input`.
    /// Real-time safe.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>,
                        delayFrames: Int) {
        let count = min(input.count, output.count, maximumBlockFrames)
        let delay = min(max(delayFrames, 0), maximumDelayFrames)
        for index in 0..<count {
            storage[(head + index) % capacity] = input[index]
        }
        var readSlot = (head - delay + capacity) % capacity
        for index in 0..<count {
            output[index] = storage[readSlot]
            readSlot += 1
            if readSlot == capacity { readSlot = 0 }
        }
        head = (head + count) % capacity
    }

    /// Forgets the stream: everything reads as silence again. Real-time safe.
    public func reset() {
        storage.update(repeating: 0, count: capacity)
        head = 0
    }
}
