import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

/// TapDevice lends each period to its taps: the capture tap sees exactly what the cycle then gets, the playback
/// tap exactly what the cycle wrote, period by period and in that order.
@Suite struct TapDeviceTests {
    /// Records, per period, what the cycle and the taps saw, and in which order they ran.
    final class Exchange {
        var capturedByTap: [[Float]] = []
        var capturedByCycle: [[Float]] = []
        var playedByCycle: [[Float]] = []
        var playedByTap: [[Float]] = []
        var order: [String] = []
    }

    @Test func tapsSeeExactlyTheFramesTheDeviceExchanged() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .virtual
        configuration.nearTalker = (0..<4800).map { Float($0 % 97) / 200 - 0.2 }
        let room = try SimulatedRoom(configuration: configuration)
        let exchange = Exchange()
        let device = TapDevice(room, capture: { frames in
            exchange.capturedByTap.append(Array(frames))
            exchange.order.append("capture tap")
        }, playback: { frames in
            exchange.playedByTap.append(Array(frames))
            exchange.order.append("playback tap")
        })
        var period = 0
        try device.start { capture, playback in
            exchange.capturedByCycle.append(Array(capture))
            for index in playback.indices { playback[index] = Float(period * playback.count + index) / 1e5 }
            exchange.playedByCycle.append(Array(playback))
            exchange.order.append("cycle")
            period += 1
        }
        try room.run(periods: 6)
        device.stop()
        #expect(exchange.capturedByCycle.count == 6)
        #expect(exchange.capturedByTap == exchange.capturedByCycle)
        #expect(exchange.playedByTap == exchange.playedByCycle)
        #expect(exchange.order == Array(repeating: ["capture tap", "cycle", "playback tap"], count: 6).flatMap { $0 })
        // The talker (and, from the second period, the echo of what was played) reached the microphone.
        #expect(exchange.capturedByTap.allSatisfy { $0.contains { $0 != 0 } })
    }
}

/// The recorder's start stamp (which puts a peer's recordings on the machine's monotonic clock for the
/// mouth-to-ear figure) is taken by the first append, and only by it.
@Suite struct StreamRecorderStampTests {
    @Test func firstAppendStampsTheMonotonicClock() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("stamp-\(UInt32.random(in: 0...UInt32.max)).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = try StreamRecorder(path: path, sampleRate: 16000)
        #expect(recorder.firstAppendNanoseconds == nil)
        let frames = [Float](repeating: 0.25, count: 160)
        let before = MonotonicClock.nanoseconds()
        frames.withUnsafeBufferPointer { recorder.append($0) }
        let after = MonotonicClock.nanoseconds()
        let stamp = try #require(recorder.firstAppendNanoseconds)
        #expect(stamp >= before && stamp <= after)
        frames.withUnsafeBufferPointer { recorder.append($0) }
        #expect(recorder.firstAppendNanoseconds == stamp)
        recorder.close()
        #expect(recorder.framesWritten == 320)
    }
}
