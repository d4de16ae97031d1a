import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Simulated room")
struct SimulatedRoomTests {
    /// Runs `room` for `periods` periods with `play(frameTime, index)` as the playback signal; returns the mic.
    static func capture(_ room: SimulatedRoom, periods: Int, play: @escaping (Int) -> Float) throws -> [Float] {
        let heard = CapturedSamples()
        var time = 0
        try room.start { capture, playback in
            heard.samples.append(contentsOf: capture)
            for index in playback.indices {
                playback[index] = play(time)
                time += 1
            }
        }
        try room.run(periods: periods)
        room.stop()
        return heard.samples
    }

    @Test("a click comes back after the bulk delay plus one period of buffering", arguments: [48000, 44100, 16000])
    func echoDelay(sampleRate: Int) throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.sampleRate = sampleRate
        configuration.bulkDelayMilliseconds = 50
        configuration.noiseDBFS = nil
        configuration.echoReturnLossDB = 0
        let room = try SimulatedRoom(configuration: configuration)
        let microphone = try Self.capture(room, periods: 30) { $0 == 0 ? 1 : 0 }
        let peak = microphone.indices.max { abs(microphone[$0]) < abs(microphone[$1]) }!
        #expect(peak == room.echoDelayFrames)
        #expect(room.echoDelayFrames == sampleRate / 20 + room.periodFrames)
    }

    @Test("white noise reaches the microphone weaker by the echo return loss")
    func echoReturnLoss() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.noiseDBFS = nil
        configuration.echoReturnLossDB = 12
        configuration.echoResponse = .synthetic(rt60Seconds: 0.3)
        let room = try SimulatedRoom(configuration: configuration)
        var generator = SystemRandomNumberGenerator()
        let noise = (0..<(48000 * 3)).map { _ in Float.random(in: -0.5...0.5, using: &generator) }
        let microphone = try Self.capture(room, periods: 300) { noise[$0] }
        let loss = Signal.powerDB(noise, from: 48000, to: 2 * 48000) - Signal.powerDB(microphone, from: 2 * 48000)
        #expect(abs(loss - 12) < 1, "echo return loss \(loss) dB")
    }

    @Test("a repeated near talker plays its recording, gaps and talk turns from one copy",
          arguments: [NearTalkerRepetition(gapFrames: 100), NearTalkerRepetition(gapFrames: 100, talkFrames: 700, pauseFrames: 250)])
    func repeatedTalker(repetition: NearTalkerRepetition) throws {
        let recording = (0..<1000).map { Float($0 + 1) / 1000 }
        var configuration = SimulatedRoomConfiguration()
        configuration.noiseDBFS = nil
        configuration.echoReturnLossDB = 100
        configuration.nearTalker = recording
        configuration.nearTalkerRepetition = repetition
        configuration.nearTalkerStartSeconds = 0.01
        let room = try SimulatedRoom(configuration: configuration)
        let microphone = try Self.capture(room, periods: 20) { _ in 0 }
        // The same signal written out the long way: recording and gap repeated, cut into turns.
        var stream: [Float] = []
        while stream.count < microphone.count { stream += recording + [Float](repeating: 0, count: repetition.gapFrames) }
        var expected = [Float](repeating: 0, count: 480)
        var position = 0
        while expected.count < microphone.count {
            guard repetition.talkFrames > 0 else { expected += stream; break }
            expected += stream[position..<(position + repetition.talkFrames)]
            expected += [Float](repeating: 0, count: repetition.pauseFrames)
            position += repetition.talkFrames
        }
        #expect(microphone.count == 20 * 480)
        #expect(Array(expected.prefix(microphone.count)) == microphone)
    }

    @Test("a talker at 16 kHz plays in a 48 kHz room as the same voice at 48 kHz, on time")
    func talkerAtItsOwnRate() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.noiseDBFS = nil
        configuration.echoReturnLossDB = 100
        configuration.nearTalker = SyntheticAudio.sine(frequency: 440, sampleRate: 16000, frameCount: 16000, amplitude: 0.5)
        configuration.nearTalkerSampleRate = 16000
        configuration.nearTalkerStartSeconds = 0.1
        let room = try SimulatedRoom(configuration: configuration)
        let microphone = try Self.capture(room, periods: 50) { _ in 0 }
        let startFrame = 4800
        let expected = [Float](repeating: 0, count: startFrame)
            + SyntheticAudio.sine(frequency: 440, sampleRate: 48000, frameCount: microphone.count - startFrame, amplitude: 0.5)
        // Silent before the start (but for the converter's ringing just ahead of it), then the sine within the
        // converter's passband error (measured 3e-6): a talker one frame late or early at 48 kHz is off by 0.03.
        let before = microphone[..<(startFrame - 48)].map(abs).max() ?? 0
        let after = (startFrame + 480..<microphone.count).map { abs(microphone[$0] - expected[$0]) }.max() ?? 1
        #expect(before < 0.001, "before the start: \(before)")
        #expect(after < 0.001, "largest difference from the 48 kHz sine: \(after)")
    }

    @Test("the real-time clock runs periods on its own thread and stops")
    func realTimeClock() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .realTime
        let room = try SimulatedRoom(configuration: configuration)
        try room.start { _, playback in playback.update(repeating: 0) }
        #expect(throws: SimulatedRoomError.self) { try room.run(periods: 1) }
        var waited = 0
        while room.periodCount < 5 && waited < 200 {
            usleep(10_000)
            waited += 1
        }
        room.stop()
        let stopped = room.periodCount
        usleep(50_000)
        #expect(stopped >= 5)
        #expect(room.periodCount == stopped)
    }
}

final class CapturedSamples: @unchecked Sendable {
    var samples: [Float] = []
}
