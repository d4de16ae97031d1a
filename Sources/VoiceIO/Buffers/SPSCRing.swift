import Synchronization

/// A single-producer, single-consumer ring of `Element`s over storage allocated once in `init`.
///
/// One thread writes, one other thread reads; neither ever waits. The indices run free as `UInt32` and wrap,
/// so the fill level is `write &- read` and the storage slot is `index & mask` (capacity is a power of two).
/// The producer publishes with a release store after copying; the consumer acquires before reading, and
/// the other way round for freed space.
///
/// `write`, `read`, `discard` and the counts are real-time safe: no allocation, no lock, no system call.
public final class SPSCRing<Element: BitwiseCopyable>: @unchecked Sendable {
    /// Slots in the ring: the requested capacity rounded up to a power of two.
    public let capacity: Int
    @usableFromInline let mask: UInt32
    @usableFromInline let storage: UnsafeMutablePointer<Element>
    @usableFromInline let writeIndex = Atomic<UInt32>(0)
    @usableFromInline let readIndex = Atomic<UInt32>(0)

    /// Allocates room for at least `minimumCapacity` elements (1 ... 2^30) and writes `zero` into every slot, so
    /// all the storage is resident before a real-time thread touches it (no page fault on that thread). Not
    /// real-time safe.
    public convenience init(minimumCapacity: Int, filledWith zero: Element) {
        self.init(untouchedMinimumCapacity: minimumCapacity)
        storage.initialize(repeating: zero, count: capacity)
    }

    /// Allocates room for at least `minimumCapacity` elements (1 ... 2^30) without writing it: capacity that is
    /// never used costs no resident memory, and a slot's page is faulted in by the producer's first write there
    /// (the consumer reads only written slots). For a ring whose producer is not a real-time thread. Not
    /// real-time safe.
    public init(untouchedMinimumCapacity minimumCapacity: Int) {
        precondition(minimumCapacity > 0 && minimumCapacity <= 1 << 30, "ring capacity out of range")
        var size = 1
        while size < minimumCapacity { size <<= 1 }
        capacity = size
        mask = UInt32(size - 1)
        storage = .allocate(capacity: size)
    }

    deinit { storage.deallocate() }

    /// Elements ready for the consumer. Real-time safe.
    @inlinable public var availableToRead: Int {
        Int(writeIndex.load(ordering: .acquiring) &- readIndex.load(ordering: .relaxed))
    }

    /// Free slots for the producer. Real-time safe.
    @inlinable public var availableToWrite: Int {
        capacity - Int(writeIndex.load(ordering: .relaxed) &- readIndex.load(ordering: .acquiring))
    }

    /// Producer: copies as many of `source` as fit; returns how many were written. Real-time safe.
    @inlinable @discardableResult
    public func write(_ source: UnsafeBufferPointer<Element>) -> Int {
        let write = writeIndex.load(ordering: .relaxed)
        let free = capacity - Int(write &- readIndex.load(ordering: .acquiring))
        let count = min(free, source.count)
        guard count > 0, let base = source.baseAddress else { return 0 }
        let start = Int(write & mask)
        let first = min(count, capacity - start)
        (storage + start).update(from: base, count: first)
        if first < count { storage.update(from: base + first, count: count - first) }
        writeIndex.store(write &+ UInt32(count), ordering: .releasing)
        return count
    }

    /// Consumer: copies up to `destination.count` elements out; returns how many were read. Real-time safe.
    @inlinable @discardableResult
    public func read(into destination: UnsafeMutableBufferPointer<Element>) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let count = min(Int(writeIndex.load(ordering: .acquiring) &- read), destination.count)
        guard count > 0, let base = destination.baseAddress else { return 0 }
        let start = Int(read & mask)
        let first = min(count, capacity - start)
        base.update(from: storage + start, count: first)
        if first < count { (base + first).update(from: storage, count: count - first) }
        readIndex.store(read &+ UInt32(count), ordering: .releasing)
        return count
    }

    /// Consumer: drops up to `count` of the oldest elements; returns how many were dropped. Real-time safe.
    @inlinable @discardableResult
    public func discard(_ count: Int) -> Int {
        let read = readIndex.load(ordering: .relaxed)
        let dropped = min(Int(writeIndex.load(ordering: .acquiring) &- read), max(count, 0))
        readIndex.store(read &+ UInt32(dropped), ordering: .releasing)
        return dropped
    }
}
