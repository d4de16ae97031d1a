import CAllocCounter
import Foundation
import Testing
import VoiceIO

@Suite struct DelayLineTests {
    static let block = 160

    /// Runs `input` through a fresh line block by block at a fixed delay; blocks in `writeOnly` are only written.
    static func delayed(_ input: [Float], delayFrames: Double, writeOnly: Set<Int> = []) -> [Float] {
        let line = DelayLine(maximumDelayFrames: 8000, maximumBlockFrames: block)
        var output = [Float](repeating: 0, count: input.count)
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                for (number, start) in stride(from: 0, to: x.count - block + 1, by: block).enumerated() {
                    let source = UnsafeBufferPointer(rebasing: x[start..<start + block])
                    if writeOnly.contains(number) {
                        line.write(source)
                    } else {
                        line.process(source, into: UnsafeMutableBufferPointer(rebasing: y[start..<start + block]),
                                     delayFrames: delayFrames)
                    }
                }
            }
        }
        return output
    }

    static func noise(_ count: Int) -> [Float] {
        var state: UInt32 = 12345
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.5
        }
    }

    @Test(arguments: [7.0, 37, 4321])
    func wholeDelaysAreExact(frames: Double) {
        let input = Self.noise(16 * Self.block * 4)
        let output = Self.delayed(input, delayFrames: frames)
        let shift = Int(frames)
        let worst = (shift..<input.count).map { abs(output[$0] - input[$0 - shift]) }.max() ?? 1
        #expect(worst < 1e-5, "largest error \(worst)")
        #expect(output[..<shift].allSatisfy { abs($0) < 1e-6 }, "frames before the first one written read as silence")
    }

    @Test func fractionalDelayShiftsASineByTheFraction() {
        let hertz = 1000.0, rate = 16000.0, delay = 100.25
        let input = (0..<(Self.block * 20)).map { Float(sin(2 * Double.pi * hertz * Double($0) / rate)) }
        let output = Self.delayed(input, delayFrames: delay)
        var errorPower: Float = 0, power: Float = 0
        for n in 400..<input.count {
            let expected = Float(sin(2 * Double.pi * hertz * (Double(n) - delay) / rate))
            errorPower += (output[n] - expected) * (output[n] - expected)
            power += expected * expected
        }
        #expect(10 * log10(errorPower / power) < -40)
    }

    @Test func writeOnlyBlocksKeepTheHistory() {
        let input = Self.noise(Self.block * 30)
        let always = Self.delayed(input, delayFrames: 1234.5)
        let skipped = Self.delayed(input, delayFrames: 1234.5, writeOnly: Set(5..<20))
        #expect(Array(always[(20 * Self.block)...]) == Array(skipped[(20 * Self.block)...]))
    }

    @Test func processAndWriteDoNotAllocate() {
        let line = DelayLine(maximumDelayFrames: 8000, maximumBlockFrames: Self.block)
        let input = Self.noise(Self.block)
        var output = [Float](repeating: 0, count: Self.block)
        input.withUnsafeBufferPointer { x in
            output.withUnsafeMutableBufferPointer { y in
                line.process(x, into: y, delayFrames: 3)
                alloc_counter_start()
                for step in 0..<200 {
                    line.process(x, into: y, delayFrames: 3 + Double(step) * 7.3)
                    line.write(x)
                }
                #expect(alloc_counter_stop() == 0)
            }
        }
    }
}
