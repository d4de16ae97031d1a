import Testing
@testable import VoiceIO

/// The clock drift the aligner leaves, measured from the echo canceller's own filter (`EchoPathSlide`,
/// `EchoAligner.trimDrift`).
@Suite struct EchoPathSlideTests {
    static let rate = 16000
    static let block = 160
    static let fixture = EchoSceneFixture(sampleRate: rate)

    /// A canceller that learned a two-tap path for 3 s, then a second more of the path `moveFrames` later: how far its
    /// response moved over that second, by `shiftSinceSnapshot`.
    static func measuredMove(moveFrames: Int) throws -> (frames: Float, similarity: Float) {
        let canceller = try EchoCanceller(frameCount: block, filterLengthMilliseconds: 100, sampleRate: rate)
        let far = fixture.noise(count: 4 * rate, rms: 0.1, seed: 5).map { Int16(($0 * 32767).rounded()) }
        var microphone = [Int16](repeating: 0, count: block), output = [Int16](repeating: 0, count: block)
        for start in stride(from: 0, to: far.count - block, by: block) {
            if start == 3 * rate { canceller.takeWeightSnapshot() }
            let delay = 40 + (start >= 3 * rate ? moveFrames : 0)
            for index in 0..<block {
                let now = start + index
                let direct = now >= delay ? Float(far[now - delay]) : 0
                let reflection = now >= delay + 17 ? Float(far[now - delay - 17]) : 0
                microphone[index] = Int16((0.5 * direct - 0.2 * reflection).rounded())
            }
            far.withUnsafeBufferPointer { reference in
                canceller.process(microphone: microphone, reference: reference.baseAddress! + start, output: &output)
            }
        }
        return canceller.shiftSinceSnapshot(highestHertz: 3000)
    }

    /// The response's move is read in frames, later positive, and a path that stayed reads none (the control).
    @Test func theFilterReadsHowFarItsResponseMoved() throws {
        let moved = try Self.measuredMove(moveFrames: 1), still = try Self.measuredMove(moveFrames: 0)
        #expect(abs(moved.frames - 1) < 0.2, "a path one frame later read as \(moved.frames) frames")
        #expect(moved.similarity > 0.8, "similarity \(moved.similarity)")
        #expect(abs(still.frames) < 0.05, "a path that stayed read as \(still.frames) frames")
        #expect(still.similarity > 0.95, "similarity \(still.similarity)")
    }

    /// An echo that drifts by 300 ppm at 16 kHz: the drift compensated over the last 8 s of 24, by 0.5 s of the trace,
    /// through the whole stage. Here the delay estimator's line alone stays within 8 ppm too (in our drift-change scene
    /// d04 it read 236 for 300 for 6 s): the filter's residuals must keep it there, not pull it off (a wrong sign or
    /// scale runs away).
    @Test func theCompensatedDriftIsTrimmedToTheEchos() throws {
        let seconds = 24.0
        let far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 31)
        // Reflections nearly as strong as the direct path: the arrival the delay estimator follows hops between them.
        let echo = Self.fixture.driftingEcho(far, bulkMilliseconds: 110, ppm: 300, gain: 0.5,
                                             reflections: [(0, 1), (0.0011, 0.9), (0.0024, -0.8), (0.0043, 0.7),
                                                           (0.0074, -0.4), (0.013, 0.3)])
        let microphone = EchoSceneProcessingTests.mix(echo, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 32))
        let (_, processor) = try EchoSceneProcessingTests.process(microphone: microphone, far: far)
        let late = processor.trace.filter { $0.endSeconds > seconds - 8 }.compactMap(\.driftPPM)
        #expect(late.count >= 15)
        let worst = late.map { abs($0 - 300) }.max() ?? .infinity
        #expect(worst < 8, "compensated drift over the last 8 s: \(late.map { Int($0.rounded()) }) ppm")
    }
}
