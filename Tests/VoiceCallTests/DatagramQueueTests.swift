import CAllocCounter
import Foundation
import Testing
@testable import VoiceCall

@Suite struct DatagramQueueTests {
    /// A network-like producer thread queues datagrams of varying length, retrying when the queue is full; the
    /// consumer gets each whole, in order, with its stamp. (Whether the queue ever fills here depends on the
    /// scheduler, so the drop count is asserted by `aFullQueueDropsAndCounts`.)
    @Test func carriesWholeDatagramsAcrossThreads() async throws {
        let queue = DatagramQueue(datagramCapacity: 4, maxDatagramByteCount: 200)
        let total = 2000
        let producer = Thread {
            var datagram = [UInt8](repeating: 0, count: 200)
            var index = 0
            while index < total {
                let length = 1 + index % 200
                for position in 0..<length { datagram[position] = UInt8(truncatingIfNeeded: index &+ position) }
                let queued = datagram.withUnsafeBytes { queue.enqueue(UnsafeRawBufferPointer(rebasing: $0[..<length]), ticks: Int64(index)) }
                if queued { index += 1 }
            }
        }
        producer.start()
        var buffer = [UInt8](repeating: 0, count: 200)
        var expected = 0
        var mismatches = 0
        while expected < total {
            guard let record = buffer.withUnsafeMutableBytes({ queue.dequeue(into: $0) }) else { continue }
            if record.ticks != Int64(expected) || record.byteCount != 1 + expected % 200
                || !(0..<record.byteCount).allSatisfy({ buffer[$0] == UInt8(truncatingIfNeeded: expected &+ $0) }) {
                mismatches += 1
            }
            expected += 1
        }
        #expect(mismatches == 0)
    }

    /// A full queue refuses a datagram and counts it instead of blocking or overwriting, and so does one that is
    /// too long; what was queued before comes out whole, and the queue takes datagrams again once read.
    @Test func aFullQueueDropsAndCounts() {
        let queue = DatagramQueue(datagramCapacity: 4, maxDatagramByteCount: 200)
        var accepted = 0
        while accepted < 100, (0..<200).map({ UInt8(truncatingIfNeeded: accepted &+ $0) }).withUnsafeBytes({
            queue.enqueue($0, ticks: Int64(accepted))
        }) {
            accepted += 1
        }
        #expect(accepted >= 4 && accepted < 100)
        #expect(queue.droppedCount == 1)
        let tooLong = [UInt8](repeating: 0, count: 201)
        #expect(!tooLong.withUnsafeBytes { queue.enqueue($0, ticks: 0) })
        #expect(queue.droppedCount == 2)
        var buffer = [UInt8](repeating: 0, count: 200)
        for index in 0..<accepted {
            let record = buffer.withUnsafeMutableBytes { queue.dequeue(into: $0) }
            #expect(record?.ticks == Int64(index) && record?.byteCount == 200)
            #expect((0..<200).allSatisfy { buffer[$0] == UInt8(truncatingIfNeeded: index &+ $0) })
        }
        #expect(buffer.withUnsafeMutableBytes { queue.dequeue(into: $0) } == nil)
        #expect([UInt8](repeating: 1, count: 200).withUnsafeBytes { queue.enqueue($0, ticks: 0) })
        #expect(queue.droppedCount == 2)
    }

    @Test func enqueueAndDequeueDoNotAllocate() {
        let queue = DatagramQueue()
        let datagram = [UInt8](repeating: 7, count: 172)
        var buffer = [UInt8](repeating: 0, count: 1500)
        datagram.withUnsafeBytes { source in
            buffer.withUnsafeMutableBytes { destination in
                // Once first: unoptimised builds instantiate generic type metadata on a function's first call.
                queue.enqueue(source, ticks: -1)
                _ = queue.dequeue(into: destination)
                alloc_counter_start()
                for index in 0..<200 {
                    queue.enqueue(source, ticks: Int64(index))
                    _ = queue.dequeue(into: destination)
                }
                let allocations = alloc_counter_stop()
                #expect(allocations == 0)
            }
        }
    }
}
