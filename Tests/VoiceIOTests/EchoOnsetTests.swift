import Foundation
import Testing
@testable import VoiceIO

/// An echo that starts before the linear filter: the filter's response tells (`EchoOnsetWatch`), and the aligner moves
/// the delay earlier (`EchoAligner.leadEarlierOnset`).
@Suite struct EchoOnsetTests {
    static let rate = 16000
    static let fixture = EchoSceneFixture(sampleRate: rate)

    /// A 200 ms response, in the canceller's tap units, whose strongest taps begin `onsetMilliseconds` in and decay.
    static func response(onsetMilliseconds: Double) -> [Int32] {
        var noise = EchoSceneFixture.Noise(state: 3)
        let onset = Int(onsetMilliseconds * Double(rate) / 1000)
        return (0..<(rate / 5)).map { index in
            guard index >= onset else { return 0 }
            let decay = exp(-Double(index - onset) / Double(rate / 50))
            return Int32(1e6 * decay * Double(noise.next()))
        }
    }

    /// The cut onsets `EchoOnsetWatch` counts over `fits` fits of `taps`, each after half a second in which the filter
    /// took `cancellationDB` off the microphone over the far end alone.
    static func cutCount(_ taps: [Int32], fits: Int, cancellationDB: Float = 10, isEchoFound: Bool = true) -> Int {
        var watch = EchoOnsetWatch(sampleRate: rate)
        for _ in 0..<fits {
            for _ in 0..<50 {
                watch.add(microphonePower: pow(10, cancellationDB / 10), errorPower: 1, isFarEndAlone: true)
            }
            taps.withUnsafeBufferPointer { watch.observe(taps: $0, isEchoFound: isEchoFound) }
        }
        return watch.cutCount
    }

    /// A response cut at its start (its strongest taps first) counts once per four fits; one that begins 5 ms in, as
    /// the aligner's lead leaves it, never does.
    @Test func aResponseCutAtItsStartCounts() {
        #expect(Self.cutCount(Self.response(onsetMilliseconds: 0), fits: 8) == 2)
        #expect(Self.cutCount(Self.response(onsetMilliseconds: 0), fits: 3) == 0)
        #expect(Self.cutCount(Self.response(onsetMilliseconds: 5), fits: 8) == 0)
    }

    /// Not while the filter takes under 4 dB off the microphone (learning from zero, or pulled by a talker), nor where
    /// no echo is found (a headset's talker spreads the taps at random).
    @Test func onlyAFilterThatCancelsAnEchoCounts() {
        let cut = Self.response(onsetMilliseconds: 0)
        #expect(Self.cutCount(cut, fits: 8, cancellationDB: 3) == 0)
        #expect(Self.cutCount(cut, fits: 8, isEchoFound: false) == 0)
    }

    /// The far end alone through a path whose direct sound (`directGain`, after 100 ms) comes 25 ms before a stronger
    /// reflection, with early reflections every half millisecond between them, decaying from the direct path's level
    /// (a room's: our far-speaker f03 holds its strongest stretch within 2 dB over those 25 ms), a room's tail after
    /// both, and a faint noise floor, 12 s through `OfflineVoiceProcessor`. Returns the delay applied at the end, the
    /// realignments, and the linear filter's ERLE over the last 3 s.
    static func run(directGain: Float) throws -> (delayMilliseconds: Float, realignments: Int, linearERLEDB: Double) {
        let far = try Signal.farSpeech(seconds: 12, sampleRate: rate)
        var noise = EchoSceneFixture.Noise(state: 5)
        let early = stride(from: 1608, to: 2000, by: 8).map {
            (offset: $0, gain: (noise.next() < 0 ? -0.6 : 0.6) * Float(exp(-Double($0 - 1600) / 400)))
        }
        let room = fixture.roomResponse(bulkMilliseconds: 125, seed: 7).dropFirst()
        let taps = [(offset: 1600, gain: directGain), (offset: 2000, gain: Float(1))] + early + room
        let echo = EchoSceneFixture.convolve(far, taps: taps, gain: 0.3, count: far.count)
        let floor = fixture.noise(count: far.count, rms: 1e-4, seed: 11)
        let microphone = zip(echo, floor).map { $0 + $1 }
        let processor = try OfflineVoiceProcessor(deviceRate: rate, voiceRate: rate)
        processor.enableAGC = false
        _ = processor.process(microphone: microphone, loudspeaker: far)
        let last = processor.trace.filter { $0.endSeconds > 9 }.map(\.linearERLEDB)
        return (processor.delayMilliseconds, processor.realignmentCount, last.reduce(0, +) / Double(max(last.count, 1)))
    }

    /// The delay estimator locks on the reflection and leads it by 20 ms, 5 ms after the direct path: the filter,
    /// which cannot cancel what comes before it, finds its response cut at the start, and the delay moves 10 ms
    /// earlier (95 ms; the filter then takes 25 dB off). Checked with the move switched off: the delay stays at 105 ms
    /// and the filter takes 6 dB off.
    @Test func aDirectPathBeforeTheFilterMovesTheDelayEarlier() throws {
        let cut = try Self.run(directGain: 0.6)
        #expect(cut.realignments == 2, "\(cut)")
        #expect(cut.delayMilliseconds < 99, "\(cut)")
        #expect(cut.linearERLEDB > 20, "\(cut)")
    }

    /// The control: a direct path stronger than the reflection is the estimate, and the lead covers it; the delay does
    /// not move again (80 ms; 28 dB off).
    @Test func aDirectPathTheLeadCoversStays() throws {
        let covered = try Self.run(directGain: 1.6)
        #expect(covered.realignments == 1, "\(covered)")
        #expect(abs(covered.delayMilliseconds - 80) < 2, "\(covered)")
        #expect(covered.linearERLEDB > 20, "\(covered)")
    }
}
