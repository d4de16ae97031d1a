import CAllocCounter
import Foundation
import Testing
@testable import VoiceIO

/// An echo that comes back whole but later or sooner from one moment on, as an audio server's xrun leaves it: the same
/// room response, its bulk delay moved by a server's period at 7 s (512 frames at 48 kHz, 10.7 ms, either way; or 1024,
/// 21.3 ms), a second before a talker about as loud as the echo starts (`DoubleTalkPathChangeTests.scene`).
@Suite struct EchoShiftTests {
    typealias Scene = EchoSceneProcessingTests
    static let rate = Scene.rate

    static func scene(seed: UInt64, moveMilliseconds: Double) throws
        -> (far: [Float], microphone: [Float], near: [Float], talkerFrames: Range<Int>) {
        try DoubleTalkPathChangeTests.scene(seed: seed, before: (60, 0.6), after: (60 + moveMilliseconds, 0.6),
                                            changeSeconds: 7, talkerSeconds: 8)
    }

    /// The filter is found misadjusted 30 ms after the move and starts over; 200 ms later its old path comes back,
    /// moved. Over the talker's first 2 s, seeds 41, 61, 81: the echo left 10.9, 10.5, 10.7 dB under the microphone's
    /// and the talker -0.79, -0.72, -0.88 dB; 8.5, 8.1, 5.1 dB and -1.31, -1.21, -3.09 dB when the filter learned the
    /// moved path from nothing. At a call's 5 ms blocks, where the filter keeps its path in partitions of two blocks:
    /// 10.2, 9.8, 10.1 dB and -1.00, -0.89, -1.04 dB (held to 9.3 dB and -1.25 dB).
    @Test("an echo that comes back a period later or sooner: the filter's old path comes back moved, and the talker keeps its level",
          arguments: [(UInt64(41), 10.667, 10), (61, -10.667, 10), (81, 21.333, 10),
                      (41, 10.667, 5), (61, -10.667, 5), (81, 21.333, 5)])
    func echoMovedByAPeriod(seed: UInt64, moveMilliseconds: Double, blockMilliseconds: Int) throws {
        let (far, microphone, near, talkerFrames) = try Self.scene(seed: seed, moveMilliseconds: moveMilliseconds)
        let (output, processor) = try Scene.process(microphone: microphone, far: far, blockMilliseconds: blockMilliseconds)
        let talker = talkerFrames.lowerBound..<(talkerFrames.lowerBound + 2 * Self.rate)
        let left = DoubleTalkPathChangeTests.echoLeftDB(output, microphone: microphone, near: near, frames: talker)
        let gain = Scene.nearGainDB(output, near: near, frames: talker)
        #expect(processor.pathShiftCount == 1, "the old path came back \(processor.pathShiftCount) times")
        let (leastLeft, leastGain) = blockMilliseconds == 10 ? (9.5, -1.05) : (9.3, -1.25)
        #expect(left > leastLeft, "the echo left under the talker's first 2 s is \(left) dB under the microphone's")
        #expect(gain > leastGain, "the talker's gain over its first 2 s is \(gain) dB")
    }

    /// From 6 s on, a second before the move: the restart, the 200 ms of the old path's estimate beside the restarted
    /// filter, the finder's verdict, the old path coming back and the talker after it allocate nothing and take no lock;
    /// the control's array is counted. (The unoptimised build once counted 12 allocations and 13 locks at the restart:
    /// the misadjustment monitor's first generic `sum()` of a SIMD3 looking up its conformance.)
    @Test func theOldPathComesBackWithoutAllocatingOrLocking() throws {
        let (far, microphone, _, _) = try Self.scene(seed: 41, moveMilliseconds: 10.667)
        let block = Self.rate / 100, lead = 40 * Self.rate / 1000
        let reference = [Float](repeating: 0, count: lead) + far[..<(far.count - lead)]
        let pipeline = try EchoPipeline(sampleRate: Self.rate, blockFrameCount: block)
        let (allocations, locks) = PipelineRealTimeSupport.count(pipeline, microphone: microphone, reference: reference,
                                                                 countingFrom: 6 * Self.rate)
        #expect(pipeline.pathShiftCount == 1, "the old path came back \(pipeline.pathShiftCount) times")
        #expect(allocations == 0, "allocations while the old path came back: \(allocations)")
        if LockCounting.isActive { #expect(locks == 0, "lock operations while the old path came back: \(locks)") }
        alloc_counter_start()
        let control = [Float](repeating: 1, count: block)
        #expect(alloc_counter_stop() >= 1 && control.count == block, "the control's array must be counted")
    }
}
