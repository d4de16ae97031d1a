import Foundation
import Testing
@testable import VoiceIO

/// The DC notch the processed voice leaves with (`DCNotch.voiceRadius`): the canceller's own, narrowed after it.
@Suite("The voice's DC notch")
struct DCNotchTests {
    /// Gain (dB) and phase (degrees, positive: ahead) of `filter` at `hertz`, from a sine's last half second after
    /// two seconds of settling.
    static func response(at hertz: Double, sampleRate: Int, filter: (Float) -> Float) -> (gainDB: Double, degrees: Double) {
        let omega = 2 * Double.pi * hertz / Double(sampleRate)
        let count = 5 * sampleRate / 2, fitted = (2 * sampleRate)..<count
        var inPhase = 0.0, quadrature = 0.0
        for n in 0..<count {
            let output = Double(filter(Float(sin(omega * Double(n)))))
            guard fitted.contains(n) else { continue }
            inPhase += output * sin(omega * Double(n))
            quadrature += output * cos(omega * Double(n))
        }
        let scale = 2 / Double(fitted.count)
        return (20 * log10(hypot(inPhase, quadrature) * scale), atan2(quadrature, inPhase) * 180 / Double.pi)
    }

    @Test("the voice leaves 3 dB down at 40 Hz and its 100 Hz turned 33°, not the canceller's 55° or more",
          arguments: [8000, 16000, 48000])
    func voiceKeepsItsLowestOctaves(sampleRate: Int) {
        let canceller = DCNotch(radius: DCNotch.outputRadius(sampleRate: sampleRate))
        let voice = DCNotch(radius: DCNotch.voiceRadius(sampleRate: sampleRate))
        func narrowed() -> (Float) -> Float {
            var notch = canceller
            var widener = NotchWidener(applied: canceller, wanted: voice)
            return { widener.filter(notch.filter($0)) }
        }
        let edge = Self.response(at: 40, sampleRate: sampleRate, filter: narrowed())
        #expect(abs(edge.gainDB + 3) < 0.3, "\(edge.gainDB) dB at 40 Hz")
        let low = Self.response(at: 100, sampleRate: sampleRate, filter: narrowed())
        #expect(low.gainDB > -0.4 && low.degrees > 0 && low.degrees < 40, "\(low.gainDB) dB, \(low.degrees)° at 100 Hz")
        // The canceller's notch alone, which the voice left with before.
        var alone = canceller
        let before = Self.response(at: 100, sampleRate: sampleRate) { alone.filter($0) }
        #expect(before.degrees > 50 && before.gainDB < -0.9, "\(before.gainDB) dB, \(before.degrees)° at 100 Hz")
    }

    @Test("a near talker alone keeps its least-squares gain within 0.25 dB (0.37 lost with the canceller's notch)")
    func nearTalkerAloneKeepsItsGain() throws {
        let rate = 16000
        let talker = try Signal.fixture("near-speech-16k.wav", sampleRate: rate)
        var settings = EchoPipelineSettings()
        settings.isNoiseSuppressionEnabled = false
        let processor = try OfflineVoiceProcessor(deviceRate: rate, voiceRate: rate, settings: settings)
        processor.enableAGC = false
        let output = processor.process(microphone: talker, loudspeaker: [Float](repeating: 0, count: talker.count))
        let gainDB = EchoSceneProcessingTests.nearGainDB(output, near: talker, frames: rate..<talker.count)
        #expect(gainDB > -0.25 && gainDB < 0.25, "the talker's gain \(gainDB) dB")
    }
}
