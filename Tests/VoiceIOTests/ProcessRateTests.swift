import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Voice rate conversion in both directions")
struct ProcessRateTests {
    static let cases: [(Int, Int)] = StreamFormat.voiceRates.flatMap { voice in [(voice, 44100), (voice, 48000)] }

    @Test("a sine keeps its pitch, level and length through the unit", arguments: cases)
    func sineSurvives(voiceRate: Int, deviceRate: Int) throws {
        let seconds = 1.5
        var room = SimulatedRoomConfiguration()
        room.sampleRate = deviceRate
        room.echoReturnLossDB = 200
        room.noiseDBFS = nil
        room.nearTalker = SyntheticAudio.sine(frequency: 440, sampleRate: deviceRate,
                                              frameCount: Int(seconds * Double(deviceRate)), amplitude: 0.3)
        let far = SyntheticAudio.sine(frequency: 330, sampleRate: voiceRate,
                                      frameCount: Int(seconds * Double(voiceRate)), amplitude: 0.3)
        let harness = try UnitHarness(room: room, voiceRate: voiceRate, far: far, recordSeconds: seconds)
        harness.unit.bypassVoiceProcessing = true
        let periods = Int(seconds * 100)
        try harness.run(periods: periods)

        // Capture direction: device-rate mic → voice-rate output.
        let expectedFrames = Double(periods * harness.room.periodFrames) * Double(voiceRate) / Double(deviceRate)
        #expect(abs(Double(harness.output.count) - expectedFrames) <= Double(voiceRate / 100 + 64))
        let steady = harness.output[(voiceRate / 5)..<(harness.output.count - voiceRate / 10)]
        #expect(abs(Signal.frequency(steady, sampleRate: voiceRate) - 440) < 0.5)
        let level = Signal.powerDB(Array(steady))
        #expect(abs(level - 10 * log10(0.045)) < 0.5, "capture level \(level) dB")

        // Playback direction: voice-rate far end → device-rate loudspeaker.
        let played = harness.room.recording().loudspeaker
        #expect(played.count == periods * harness.room.periodFrames)
        let playedSteady = played[(deviceRate / 5)..<(deviceRate * 5 / 4)]
        #expect(abs(Signal.frequency(playedSteady, sampleRate: deviceRate) - 330) < 0.5)
        #expect(abs(Signal.powerDB(Array(playedSteady)) - 10 * log10(0.045)) < 0.5)
    }

    @Test("the offline processor rejects voice rates and processing blocks outside the lists")
    func unsupportedVoiceRate() {
        #expect(throws: VoiceProcessingError.self) { try OfflineVoiceProcessor(deviceRate: 48000, voiceRate: 44100) }
        let error = #expect(throws: VoiceProcessingError.self) {
            try OfflineVoiceProcessor(deviceRate: 48000, voiceRate: 16000, processingBlockMilliseconds: 7)
        }
        guard case .unsupportedBlock(milliseconds: 7)? = error else {
            Issue.record("a 7 ms block: \(String(describing: error))")
            return
        }
    }

    /// At 10 ms blocks (`process`'s default) and at 5 ms (a call's unit): the same count, the echo down, no lag.
    @Test("the offline processor cancels a recorded room's echo; its output is aligned with the microphone",
          arguments: [10, 5])
    func offlineMatchesContract(blockMilliseconds: Int) throws {
        var room = UnitTests.room()
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        room.nearTalkerStartSeconds = 6
        let harness = try UnitHarness(room: room, far: try Signal.farSpeech(seconds: 6), recordSeconds: 10)
        try harness.run(seconds: 10)
        let recording = harness.room.recording()
        let processor = try OfflineVoiceProcessor(deviceRate: 48000, voiceRate: 16000,
                                                  processingBlockMilliseconds: blockMilliseconds)
        processor.enableAGC = false
        let voice = processor.process(microphone: recording.microphone, loudspeaker: recording.loudspeaker)
        #expect(voice.count == recording.microphone.count / 3)
        let erle = Signal.powerDB(recording.microphone, from: 3 * 48000, to: 6 * 48000)
            - Signal.powerDB(voice, from: 3 * 16000, to: 6 * 16000)
        #expect(erle > 15, "offline ERLE \(erle) dB")
        // Conversion only (the canceller's DC notch shifts the phase of low frequencies): the output follows the
        // microphone without a lag, as the process contract's time base requires.
        let converter = try OfflineVoiceProcessor(deviceRate: 48000, voiceRate: 16000,
                                                  processingBlockMilliseconds: blockMilliseconds)
        converter.bypass = true
        let converted = converter.process(microphone: recording.microphone, loudspeaker: recording.loudspeaker)
        let mic16k = stride(from: 0, to: recording.microphone.count, by: 3).map { recording.microphone[$0] }
        var best = (lag: 0, value: -Double.infinity)
        for lag in -40...40 {
            var sum = 0.0
            for index in (6 * 16000 + 100)..<(9 * 16000) { sum += Double(converted[index + lag]) * Double(mic16k[index]) }
            if sum > best.value { best = (lag, sum) }
        }
        #expect(best.lag == 0, "output lags the microphone by \(best.lag) frames")
    }

    /// A 44.1 kHz device: the conversion's delay is no whole number of 16 kHz frames, and the output still follows the
    /// microphone's time line to a small fraction of a frame (`PolyphaseDecimator`'s alignment). A tone of 1 and 3 kHz
    /// through the bypass, against the same tone at the voice rate: −107 dB measured; with the decimator on speexdsp's
    /// own grid (`alignsToOutputFrames` false: 0.64 frame off), −6.8 dB.
    @Test("the offline output of a 44.1 kHz device follows the microphone's time line within a frame's fraction")
    func fortyFourKilohertzOutputIsOnTheMicrophonesTimeLine() throws {
        func tone(rate: Int, count: Int) -> [Float] {
            (0..<count).map { n in
                let t = Double(n) / Double(rate)
                return Float(0.3 * sin(2 * Double.pi * 1000 * t) + 0.2 * sin(2 * Double.pi * 3000 * t))
            }
        }
        let microphone = tone(rate: 44100, count: 2 * 44100)
        let converter = try OfflineVoiceProcessor(deviceRate: 44100, voiceRate: 16000)
        converter.bypass = true
        let voice = converter.process(microphone: microphone, loudspeaker: [Float](repeating: 0, count: microphone.count))
        let wanted = tone(rate: 16000, count: 2 * 16000)
        let mismatchDB = DSPTestSupport.mismatchDB(voice[8000..<24000], wanted[8000..<24000])
        #expect(mismatchDB < -40, "the output is \(mismatchDB) dB off the microphone's time line")
    }
}
