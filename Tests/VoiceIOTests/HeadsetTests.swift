import Foundation
import Testing
import VoiceIO

/// A headset: the microphone hears no echo, and a near talker speaks over the far end, quieter than its reference.
/// The linear filter finds nothing to cancel; the talker pulls it, and its onsets can lock the delay estimate at a
/// chance peak, both of which start the filter over. That may not cost the talker, nor may what the canceller
/// concluded keep an echo heard later.
@Suite("A headset")
struct HeadsetTests {
    typealias Scene = EchoSceneProcessingTests

    /// `talker` placed from `talkerStartSeconds` over the length of `far`, and the microphone: the talker and a faint
    /// noise (no echo).
    static func scene(talker: [Float], far: [Float], talkerStartSeconds: Int) -> (near: [Float], microphone: [Float]) {
        var near = [Float](repeating: 0, count: far.count)
        let start = talkerStartSeconds * Scene.rate
        for (index, sample) in talker.enumerated() where start + index < near.count { near[start + index] = sample }
        return (near, Scene.mix(near, Scene.fixture.noise(count: far.count, rms: 0.0003, seed: 171)))
    }

    /// The talker's gain over 3 s windows from `fromSeconds` to `toSeconds`, in dB.
    static func windowGains(_ output: [Float], near: [Float], fromSeconds: Int, toSeconds: Int) -> [Double] {
        stride(from: fromSeconds, to: toSeconds, by: 3).map {
            Scene.nearGainDB(output, near: near, frames: ($0 * Scene.rate)..<(($0 + 3) * Scene.rate))
        }
    }

    @Test("a talker 7-13 dB under the far end keeps its level when a chance delay lock starts the filter over",
          arguments: [Float(0.02), 0.04])
    func chanceDelayLock(talkerScale: Float) throws {
        let farVoice = try Signal.fixture("far-speech-16k.wav", sampleRate: Scene.rate).map { $0 * 0.1 }
        let talkerVoice = try Signal.fixture("near-speech-16k.wav", sampleRate: Scene.rate).map { $0 * talkerScale }
        let far = Array([[Float]](repeating: farVoice, count: 4).joined())
        let (near, microphone) = Self.scene(talker: Array([[Float]](repeating: talkerVoice, count: 3).joined()),
                                            far: far, talkerStartSeconds: 4)
        let level = Scene.decibels(Scene.power(near, from: 5, to: 20) / Scene.power(far, from: 5, to: 20))
        #expect(level < -6, "the talker only \(-level) dB under the far end")
        let (output, processor) = try Scene.process(microphone: microphone, far: far)
        #expect(processor.realignmentCount > 0, "no delay was locked on the talker")
        #expect(processor.isNoEchoFound, "the headset's microphone was taken for one that hears echo")

        // Measured per 3 s from 5 s: at worst -1.2 dB (-13 dB talker) and -1.0 dB (-7 dB); -5.8 and -3.7 dB when the
        // restart also restarted the suppressor's ratios to the reference from their pessimistic start.
        for (index, gain) in Self.windowGains(output, near: near, fromSeconds: 5, toSeconds: 20).enumerated() {
            #expect(gain > -2, "near talker gain \(gain) dB from \(5 + 3 * index) s")
        }
    }

    /// A headset unplugged, or a loudspeaker turned up from silence: the microphone hears no echo for 6 s of far end,
    /// then a room's. What the canceller concluded from the silence (no echo to find) must not keep the echo.
    @Test("a loudspeaker heard after 6 s of a microphone that heard none is cancelled within 2 s")
    func echoAfterAHeadset() throws {
        let far = Scene.fixture.speechLike(seconds: 12, rms: 0.1, seed: 181)
        var echo = Scene.roomEcho(far, bulkMilliseconds: 40, seed: 182, gain: 0.5)
        for index in 0..<(6 * Scene.rate) { echo[index] = 0 }
        let microphone = Scene.mix(echo, Scene.fixture.noise(count: far.count, rms: 0.0003, seed: 183))
        let (output, _) = try Scene.process(microphone: microphone, far: far)
        let erle = Scene.erleDB(microphone, output, from: 8, to: 12)
        // Measured 52 dB (54-58 dB from 6.5 s on); 1.2 dB when a filter that had found no echo held its learning while
        // the suppressor heard a talker, which the new echo was taken for.
        #expect(erle > 30, "ERLE \(erle) dB from 8 s")
    }
}
