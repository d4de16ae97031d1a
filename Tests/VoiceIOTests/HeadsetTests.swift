import Foundation
import Testing
import VoiceIO

/// A headset: the microphone hears no echo, and a near talker speaks over the far end, quieter than its reference.
/// The linear filter finds nothing to cancel, so the talker pulls it (and its onsets can lock the delay estimate at a
/// chance peak), and it is started over: what the suppressor learned against the reference, that nothing comes back,
/// must survive that.
@Suite("A headset")
struct HeadsetTests {
    typealias Scene = EchoSceneProcessingTests

    @Test("a talker 7-13 dB under the far end keeps its level while the filter it pulls starts over",
          arguments: [Float(0.02), 0.04])
    func quietTalkerOverTheFarEnd(talkerScale: Float) throws {
        let farVoice = try Signal.fixture("far-speech-16k.wav", sampleRate: Scene.rate).map { $0 * 0.1 }
        let far = Array([[Float]](repeating: farVoice, count: 4).joined())
        let talkerVoice = try Signal.fixture("near-speech-16k.wav", sampleRate: Scene.rate).map { $0 * talkerScale }
        let talkerStart = 4 * Scene.rate
        var near = [Float](repeating: 0, count: far.count)
        for (index, sample) in Array([[Float]](repeating: talkerVoice, count: 3).joined()).enumerated()
        where talkerStart + index < near.count {
            near[talkerStart + index] = sample
        }
        let microphone = Scene.mix(near, Scene.fixture.noise(count: far.count, rms: 0.0003, seed: 171))
        let level = Scene.decibels(Scene.power(near, from: 5, to: 20) / Scene.power(far, from: 5, to: 20))
        #expect(level < -6, "the talker only \(-level) dB under the far end")
        let (output, processor) = try Scene.process(microphone: microphone, far: far)
        #expect(processor.divergenceResetCount > 0, "the filter was never started over")

        // Measured per 3 s from 5 s: at worst -1.2 dB (-13 dB talker) and -1.0 dB (-7 dB); -5.7 and -3.7 dB when a
        // restart also restarted the suppressor's ratios to the reference from their pessimistic start.
        for start in stride(from: 5, to: 20, by: 3) {
            let frames = (start * Scene.rate)..<((start + 3) * Scene.rate)
            let gain = Scene.nearGainDB(output, near: near, frames: frames)
            #expect(gain > -2.5, "near talker gain \(gain) dB from \(start) s")
        }
    }
}
