import Foundation
import Testing
@testable import VoiceIO

@Suite struct SPSCRingTests {
    /// Both ways of allocating: slots filled with zero up front, and left untouched until written.
    @Test(arguments: [true, false])
    func roundsCapacityAndWraps(filled: Bool) {
        let ring = filled ? SPSCRing<Int32>(minimumCapacity: 5, filledWith: 0) : SPSCRing<Int32>(untouchedMinimumCapacity: 5)
        #expect(ring.capacity == 8)
        var out = [Int32](repeating: -1, count: 8)
        for round in 0..<100 {
            let values = (0..<6).map { Int32(round * 6 + $0) }
            let written = values.withUnsafeBufferPointer { ring.write($0) }
            #expect(written == 6)
            #expect(ring.availableToRead == 6 && ring.availableToWrite == 2)
            let read = out.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            #expect(read == 6)
            #expect(Array(out[0..<6]) == values)
        }
    }

    @Test func refusesWhatDoesNotFit() {
        let ring = SPSCRing<Float>(minimumCapacity: 4, filledWith: 0)
        let five: [Float] = [1, 2, 3, 4, 5]
        #expect(five.withUnsafeBufferPointer { ring.write($0) } == 4)
        #expect(ring.availableToWrite == 0)
        #expect(ring.discard(10) == 4)
        #expect(ring.availableToRead == 0)
    }

    /// A producer thread writes a counting sequence in odd-sized blocks; the consumer checks every value.
    @Test func carriesACountingSequenceAcrossThreads() async {
        let ring = SPSCRing<UInt32>(minimumCapacity: 1000, filledWith: 0)
        let total: UInt32 = 2_000_000
        let producer = Thread {
            var next: UInt32 = 0
            var block = [UInt32](repeating: 0, count: 97)
            var size = 1
            while next < total {
                size = size % 97 + 1
                let count = min(size, Int(total - next))
                for i in 0..<count { block[i] = next + UInt32(i) }
                var sent = 0
                while sent < count {
                    sent += block.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[sent..<count])) }
                }
                next += UInt32(count)
            }
        }
        producer.start()
        var expected: UInt32 = 0
        var mismatches = 0
        var block = [UInt32](repeating: 0, count: 61)
        while expected < total {
            let got = block.withUnsafeMutableBufferPointer { ring.read(into: $0) }
            for i in 0..<got where block[i] != expected + UInt32(i) { mismatches += 1 }
            expected += UInt32(got)
        }
        #expect(mismatches == 0)
        #expect(expected == total)
    }
}
