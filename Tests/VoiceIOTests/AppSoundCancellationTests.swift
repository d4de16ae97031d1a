import Glibc
import Testing
import VoiceIO
import VoiceIOSimulation

/// App sounds through the graph into the unit, nobody talking, as `scripts/app-sounds` plays them: held music on
/// one mixer bus and a chime of two pure tones (880 and 1320 Hz, 0.6 s every 3 s, −6 dB) on another. The unit
/// must cancel them from the microphone like the far end: they are its echo reference.
@Suite("App sounds cancelled from the microphone")
struct AppSoundCancellationTests {
    /// Measured from 10 s to 30 s, as `scripts/app-sounds` measures. While the chime's pure tones held the delay
    /// estimate off, this read 17.8 dB; with the reference's first sound counted and a persistent peak published,
    /// 25.6 dB. (The script's chime file reads 29.5 dB: the music's hard passages give 17-31 dB second by second
    /// with either chime, and the easier rest swings with such details.) Today 38.1 dB (36.4 with the detector reading
    /// half the second linear stage's estimate as echo left, `ResidualEchoSuppressor`'s `stagedEchoShare`).
    @Test("held music and a chime through the graph: at least 22 dB lower in the processed microphone",
          .enabled(if: Signal.isHeldMusicInstalled, "needs asterisk-moh-opsound-wav"))
    func musicAndChimeAreCancelled() throws {
        let seconds = 30.0
        let rig = try GraphHarness(room: SimulatedRoomConfiguration(), recordSeconds: seconds) { format in
            let music = try FilePlayerNode(path: Signal.heldMusicPath, format: format)
            try music.schedule(loops: true)
            return [music, RenderCallbackNode(format: format) { frames, time in
                Self.chime(into: frames, startingAt: time, sampleRate: format.sampleRate)
            }]
        }
        defer { rig.graph.stop() }
        rig.mixer.setVolume(decibels: -6, bus: 1, rampMilliseconds: 0)
        let harness = rig.harness
        try rig.run(periods: Int(seconds * 1000 / harness.room.configuration.periodMilliseconds))
        let sampleRate = harness.unit.deviceConfiguration.sampleRate
        let microphone = harness.room.recording().microphone
        let skipSeconds = 10.0
        let microphoneDB = Signal.powerDB(microphone, from: Int(skipSeconds * Double(sampleRate)))
        let processedDB = Signal.powerDB(harness.output, from: Int(skipSeconds * 16000))
        print(String(format: "app sounds: microphone %.1f dBFS, processed %.1f dBFS, reduction %.1f dB",
                     microphoneDB, processedDB, microphoneDB - processedDB))
        let perSecond = stride(from: 0, to: Int(seconds), by: 1).map { second in
            Signal.powerDB(microphone, from: second * sampleRate, to: (second + 1) * sampleRate)
                - Signal.powerDB(harness.output, from: second * 16000, to: (second + 1) * 16000)
        }
        print("per second: " + perSecond.map { String(format: "%.1f", $0) }.joined(separator: " "))
        #expect(microphoneDB > -45, "the app sounds did not reach the microphone (\(microphoneDB) dBFS)")
        #expect(microphoneDB - processedDB >= 22, "app sounds reduced by only \(microphoneDB - processedDB) dB")
    }

    /// The chime `scripts/app-sounds` makes with sox (`synth 0.6 sine 880 sine 1320 fade 0 0.6 0.5 gain -8 pad 0
    /// 2.4`): both tones at 0.19 for 0.1 s, then sox's logarithmic fade (−20 dB per 0.1 s) to 0.6 s, every 3 s.
    static func chime(into frames: UnsafeMutableBufferPointer<Float>, startingAt time: Int, sampleRate: Int) {
        for index in frames.indices {
            let secondsIntoCycle = Double((time + index) % (3 * sampleRate)) / Double(sampleRate)
            guard secondsIntoCycle < 0.6 else { frames[index] = 0; continue }
            let fade = secondsIntoCycle < 0.1 ? 1 : pow(10, -10 * (secondsIntoCycle - 0.1))
            let phase = 2 * Double.pi * secondsIntoCycle
            frames[index] = Float(0.19 * fade * (sin(880 * phase) + sin(1320 * phase)))
        }
    }
}
