import CAllocCounter
import Foundation
import Testing
@testable import VoiceCall

@Suite struct DatagramQueueTests {
    /// A network-like producer thread queues datagrams of varying length; the consumer gets each whole, in order,
    /// with its stamp; a full queue drops and counts instead of blocking.
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
        #expect(queue.droppedCount > 0)
        let tooLong = [UInt8](repeating: 0, count: 201)
        #expect(!tooLong.withUnsafeBytes { queue.enqueue($0, ticks: 0) })
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
