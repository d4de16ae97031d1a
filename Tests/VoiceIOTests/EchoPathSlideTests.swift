import Foundation
import Testing
@testable import VoiceIO

/// The clock drift the aligner leaves, measured from the echo canceller's own filter (`EchoPathSlide`,
/// `EchoAligner.trimDrift`).
@Suite struct EchoPathSlideTests {
    static let rate = 16000
    static let block = 160
    static let fixture = EchoSceneFixture(sampleRate: rate)
    /// Reflections nearly as strong as the direct path: the arrival the delay estimator follows hops between them.
    static let hoppingReflections: [(Double, Float)] = [(0, 1), (0.0011, 0.9), (0.0024, -0.8), (0.0043, 0.7),
                                                        (0.0074, -0.4)]

    /// A 1 kHz tone at 0.1 of full scale.
    static func tone(seconds: Int) -> [Float] {
        (0..<(seconds * rate)).map { Float(0.1 * sin(2 * Double.pi * 1000 * Double($0) / Double(rate))) }
    }

    /// Runs `far` block by block through a two-tap path, `delayFrames(start)` frames behind it at each block, into a
    /// new canceller; `each` sees the canceller after every block with the block's microphone and output powers.
    static func cancel(_ far: [Float], block: Int = block, delayFrames: (Int) -> Int,
                       each: (_ start: Int, EchoCanceller, _ microphonePower: Float, _ errorPower: Float) -> Void) throws {
        let canceller = try EchoCanceller(frameCount: block, filterLengthMilliseconds: 100, sampleRate: rate)
        let reference = far.map { Int16(($0 * 32767).rounded()) }
        var microphone = [Int16](repeating: 0, count: block), output = [Int16](repeating: 0, count: block)
        for start in stride(from: 0, to: reference.count - block, by: block) {
            let delay = delayFrames(start)
            for index in 0..<block {
                let now = start + index
                let direct = now >= delay ? Float(reference[now - delay]) : 0
                let reflection = now >= delay + 17 ? Float(reference[now - delay - 17]) : 0
                microphone[index] = Int16((0.5 * direct - 0.2 * reflection).rounded())
            }
            reference.withUnsafeBufferPointer { r in
                canceller.process(microphone: microphone, reference: r.baseAddress! + start, output: &output)
            }
            let microphonePower = microphone.reduce(Float(0)) { $0 + Float($1) * Float($1) }
            let errorPower = output.reduce(Float(0)) { $0 + Float($1) * Float($1) }
            each(start, canceller, microphonePower, errorPower)
        }
    }

    /// A canceller that learned a two-tap path for 3 s, then a second more of the path `moveFrames` later: how far its
    /// response moved over that second, by `shiftSinceSnapshot`.
    static func measuredMove(moveFrames: Int) throws -> (frames: Float, similarity: Float, spread: Float) {
        var move: (frames: Float, similarity: Float, spread: Float) = (0, 0, 0)
        let far = fixture.noise(count: 4 * rate, rms: 0.1, seed: 5)
        try cancel(far, delayFrames: { $0 >= 3 * rate ? 40 + moveFrames : 40 }) { start, canceller, _, _ in
            if start + block == 3 * rate { canceller.takeWeightSnapshot() }
            move = canceller.shiftSinceSnapshot(highestHertz: 3000)
        }
        return move
    }

    /// Measurements `EchoPathSlide` counts over 6 s of a far end through a still two-tap path, in blocks of `block`
    /// frames; a block plays where any of its far end's samples is not zero.
    static func measurementCount(far: [Float], block: Int = block) throws -> Int {
        var slide = EchoPathSlide(sampleRate: rate, blockFrameCount: block)
        try cancel(far, block: block, delayFrames: { _ in 40 }) { start, canceller, microphonePower, errorPower in
            let farEndActive = far[start..<(start + block)].contains { $0 != 0 }
            slide.observe(canceller, farEndActive: farEndActive, isTalkerHeard: false,
                          microphonePower: microphonePower, errorPower: errorPower)
        }
        return slide.measurementCount
    }

    /// A tone's echo fills one bin of the filter: the phase there tells no delay (a 1 kHz tone under 300 ppm read 10-15
    /// ppm), and no measurement is counted. Noise through the same path is measured (the control).
    @Test func aToneIsNotMeasured() throws {
        #expect(try Self.measurementCount(far: Self.tone(seconds: 6)) == 0)
        #expect(try Self.measurementCount(far: Self.fixture.noise(count: 6 * Self.rate, rms: 0.1, seed: 7)) >= 3)
    }

    /// A far end that pauses for 56 ms in every half second of the measurement's intervals: 10 ms blocks find 50 ms of
    /// it silent (45 of 50 blocks play, the least share that counts), a call's 5 ms blocks 55 ms (89 of 100), and took
    /// no measurement while the 10 ms ones took theirs (our drift-change d04: its 300 ppm left at 261 through the
    /// double talk at 5 ms, trimmed to 301 at 10). A silence counts from its tuned block's length on: both are
    /// measured.
    @Test("a short pause counts alike in 5 and 10 ms blocks", arguments: [Self.block / 2, Self.block])
    func aShortPauseCountsAlikeInEitherBlock(block: Int) throws {
        let pauseFrames = 56 * Self.rate / 1000
        let far = Self.fixture.noise(count: 6 * Self.rate, rms: 0.1, seed: 7).enumerated().map { index, sample in
            let offset = index % (Self.rate / 2) - Self.rate / 5
            return offset >= 0 && offset < pauseFrames ? 0 : sample
        }
        #expect(try Self.measurementCount(far: far, block: block) >= 3)
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
        let echo = Self.fixture.driftingEcho(far, bulkMilliseconds: 110, ppm: 300, gain: 0.5,
                                             reflections: Self.hoppingReflections + [(0.013, 0.3)])
        let microphone = EchoSceneProcessingTests.mix(echo, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 32))
        let (_, processor) = try EchoSceneProcessingTests.process(microphone: microphone, far: far)
        let late = processor.trace.filter { $0.endSeconds > seconds - 8 }.compactMap(\.driftPPM)
        #expect(late.count >= 15)
        let worst = late.map { abs($0 - 300) }.max() ?? .infinity
        #expect(worst < 8, "compensated drift over the last 8 s: \(late.map { Int($0.rounded()) }) ppm")
    }

    /// Speech, then a tone (hold music, a ringback) through an echo that drifts by 300 ppm over `hoppingReflections`:
    /// the delay estimator's arrivals on a tone pull the line off (to 183 ppm before the trim, over 5 s of the tone).
    /// The drift the filter measured in the speech holds through the tone.
    @Test func theTrimmedDriftHoldsThroughATone() throws {
        let speech = try Signal.fixture("far-speech-16k.wav", sampleRate: Self.rate)
        let far = Array((speech + speech).prefix(12 * Self.rate)) + Self.tone(seconds: 14)
        try #require(far.count == 26 * Self.rate, "the speech fixture twice over is shorter than 12 s")
        let echo = Self.fixture.driftingEcho(far, bulkMilliseconds: 80, ppm: 300, gain: 0.4,
                                             reflections: Self.hoppingReflections)
        let microphone = EchoSceneProcessingTests.mix(echo, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 9))
        let (_, processor) = try EchoSceneProcessingTests.process(microphone: microphone, far: far)
        let drift = processor.trace.filter { $0.endSeconds > 12 }.compactMap(\.driftPPM)
        let worst = drift.map { abs($0 - 300) }.max() ?? .infinity
        #expect(worst < 15, "compensated drift through the tone: \(drift.map { Int($0.rounded()) }) ppm")
    }
}
