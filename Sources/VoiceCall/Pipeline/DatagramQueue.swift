import Synchronization
import VoiceIO

/// Hands whole datagrams, each with a time stamp, from one thread to another without locks: the network
/// thread enqueues received RTP for the audio thread's jitter buffer, and the audio thread can enqueue
/// encoded packets for the network thread to send.
///
/// Each record (time, length, bytes) goes into an `SPSCRing` of bytes in one write, so the consumer never sees
/// half a record. A record that does not fit is dropped and counted. `enqueue`, `dequeue` and the counts are
/// real-time safe; storage is allocated in `init`.
public final class DatagramQueue: @unchecked Sendable {
    private static let prefixByteCount = MemoryLayout<Int64>.size + MemoryLayout<Int32>.size

    /// Longest datagram accepted, in bytes.
    public let maxDatagramByteCount: Int
    private let ring: SPSCRing<UInt8>
    private let producerScratch: UnsafeMutableRawBufferPointer
    private let dropped = Atomic<Int>(0)

    /// Room for about `datagramCapacity` datagrams of `maxDatagramByteCount`. Not real-time safe.
    public init(datagramCapacity: Int = 64, maxDatagramByteCount: Int = 1500) {
        self.maxDatagramByteCount = maxDatagramByteCount
        ring = SPSCRing(minimumCapacity: datagramCapacity * (maxDatagramByteCount + Self.prefixByteCount), filledWith: 0)
        producerScratch = .allocate(byteCount: maxDatagramByteCount + Self.prefixByteCount, alignment: 8)
    }

    deinit { producerScratch.deallocate() }

    /// Datagrams dropped because the queue was full or they were too long. Any thread.
    public var droppedCount: Int { dropped.load(ordering: .relaxed) }

    /// Producer: queues `datagram` stamped with `ticks` (e.g. its arrival time); false when dropped.
    @discardableResult
    public func enqueue(_ datagram: UnsafeRawBufferPointer, ticks: Int64) -> Bool {
        let recordByteCount = Self.prefixByteCount + datagram.count
        guard datagram.count <= maxDatagramByteCount, ring.availableToWrite >= recordByteCount else {
            dropped.add(1, ordering: .relaxed)
            return false
        }
        producerScratch.storeBytes(of: ticks, as: Int64.self)
        producerScratch.storeBytes(of: Int32(datagram.count), toByteOffset: 8, as: Int32.self)
        if let source = datagram.baseAddress {
            (producerScratch.baseAddress! + Self.prefixByteCount).copyMemory(from: source, byteCount: datagram.count)
        }
        ring.write(UnsafeRawBufferPointer(rebasing: producerScratch[..<recordByteCount]).assumingMemoryBound(to: UInt8.self))
        return true
    }

    /// Consumer: takes the oldest datagram into `buffer` (at least `maxDatagramByteCount` bytes); returns its
    /// byte count and stamp, or nil when the queue is empty.
    public func dequeue(into buffer: UnsafeMutableRawBufferPointer) -> (byteCount: Int, ticks: Int64)? {
        precondition(buffer.count >= maxDatagramByteCount, "dequeue buffer smaller than the longest datagram")
        guard ring.availableToRead >= Self.prefixByteCount else { return nil }
        var prefix = (Int64(0), Int32(0))
        withUnsafeMutableBytes(of: &prefix) { bytes in
            _ = ring.read(into: UnsafeMutableRawBufferPointer(rebasing: bytes[..<Self.prefixByteCount]).assumingMemoryBound(to: UInt8.self))
        }
        let byteCount = Int(prefix.1)
        ring.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<byteCount]).assumingMemoryBound(to: UInt8.self))
        return (byteCount, prefix.0)
    }
}
