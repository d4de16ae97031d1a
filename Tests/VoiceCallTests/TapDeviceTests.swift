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

/// A recorder's timeline: one point per append (the frames written before it and the clock then), so a device
/// that stalls shows in the points, and `RecordingTimeline` places every frame at its own time.
@Suite struct RecordingTimelineTests {
    @Test func theTimelineHasAPointPerAppendAndShowsAStall() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("timeline-\(UInt32.random(in: 0...UInt32.max)).wav").path
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".timeline")
        }
        let recorder = try StreamRecorder(path: path, sampleRate: 16000, timelinePath: path + ".timeline")
        let frames = [Float](repeating: 0.25, count: 160)
        frames.withUnsafeBufferPointer { recorder.append($0) }
        frames.withUnsafeBufferPointer { recorder.append($0) }
        usleep(100_000)   // the device stalls for 0.1 s
        frames.withUnsafeBufferPointer { recorder.append($0) }
        recorder.close()
        let timeline = try RecordingTimeline(path: path + ".timeline", sampleRate: 16000)
        #expect(timeline.points.map(\.frame) == [0, 160, 320])
        // Frame 400 is 80 frames (5 ms) after the third append, which came at least 0.1 s after the second.
        let seconds = timeline.secondsFromStart(toFrame: 400)
        #expect(seconds >= 0.1 + 0.005 && seconds < 0.1 + 0.005 + 0.5, "\(seconds)")
        // Without the timeline the same frame would sit at 25 ms.
        #expect(abs(timeline.secondsFromStart(toFrame: 80) - 0.005) < 0.05)
    }

    @Test func pointsPlaceFramesAndBadFilesAreRefusedWithTheLine() throws {
        let timeline = try RecordingTimeline(points: [.init(frame: 0, nanoseconds: 1_000_000_000),
                                                      .init(frame: 480, nanoseconds: 1_010_000_000),
                                                      .init(frame: 960, nanoseconds: 1_120_000_000)], sampleRate: 48000)
        #expect(abs(timeline.secondsFromStart(toFrame: 240) - 0.005) < 1e-9)
        #expect(abs(timeline.secondsFromStart(toFrame: 1000) - (0.120 + 40.0 / 48000)) < 1e-9)
        #expect(abs(timeline.frame(atSecondsFromStart: 0.125) - 1200) < 1e-6)
        #expect(timeline.frame(atSecondsFromStart: 0.05) == 960, "a time inside the stall falls on the frame after it")
        #expect(abs(timeline.frame(atSecondsFromStart: 0.005) - 240) < 1e-6)
        #expect(throws: RecordingTimeline.ReadError.self) {
            try RecordingTimeline(points: [.init(frame: 480, nanoseconds: 0), .init(frame: 0, nanoseconds: 1)], sampleRate: 48000)
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UInt32.random(in: 0...UInt32.max)).timeline").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        for text in ["0 1\nx 2\n", "", "0 1 2\n", "-5 1\n", String(repeating: "9", count: 100) + " 1\n"] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(throws: RecordingTimeline.ReadError.self) { try RecordingTimeline(path: path, sampleRate: 48000) }
        }
    }
}
