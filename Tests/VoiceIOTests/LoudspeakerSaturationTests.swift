import Foundation
import Testing
import VoiceIO

/// A clipping loudspeaker through the whole processing stage: the saturation ahead of the linear filter is learned
/// (`EchoCanceller.loudspeakerKneeLevel`), so the filter models the clipped echo and the suppressor need not take
/// the distortion off, nor the near talker with it.
@Suite("A saturating loudspeaker")
struct LoudspeakerSaturationTests {
    typealias Scene = EchoSceneProcessingTests
    static let rate = Scene.rate

    @Test("a loudspeaker clipping at -18 dBFS: its level is found, the echo cancelled, the near talker kept")
    func clippingLoudspeaker() throws {
        let seconds = 14.0, clipLevel: Float = 0.12
        let far = Scene.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 121)
        let clipped = far.map { max(-clipLevel, min(clipLevel, $0)) }
        var near = Scene.fixture.speechLike(seconds: seconds, rms: 0.05, seed: 122)
        for index in 0..<(8 * Self.rate) { near[index] = 0 }
        let echo = Scene.roomEcho(clipped, bulkMilliseconds: 60, seed: 123, gain: 0.5)
        let microphone = Scene.mix(echo, near, Scene.fixture.noise(count: far.count, rms: 0.0003, seed: 124))
        let (output, processor) = try Scene.process(microphone: microphone, far: far)

        let knee = try #require(processor.loudspeakerKneeDBFS, "no saturation found")
        let clipDBFS = 20 * log10(Double(clipLevel))
        #expect(abs(knee - clipDBFS) < 2, "knee at \(knee) dBFS, the loudspeaker clips at \(clipDBFS)")
        let erle = Scene.erleDB(microphone, output, from: 4, to: 8)
        // Measured 53 dB; 17 dB with the filter fed the unclipped reference (the suppressor took the rest).
        #expect(erle > 40, "ERLE \(erle) dB before the near talker starts")
        let gainDB = Scene.nearGainDB(output, near: near, frames: (9 * Self.rate)..<far.count)
        // Measured -2.3 dB (-2.3 too with the filter fed the unclipped reference: this talker loses it to the
        // double-talk gain, not to the distortion).
        #expect(gainDB > -3, "near talker gain \(gainDB) dB in double talk")
    }
}
