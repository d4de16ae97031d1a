import Foundation
import Testing
@testable import VoiceIO

/// At a call's 5 ms blocks, the block after a talker's onset may stand over the microphone and against the linear
/// filter's estimate, as a moved path's first block does (a filter the talker's first words pulled overshoots the
/// echo): it is the filter's own error only if it also stands well over the leftover the suppressor expects
/// (`ResidualEchoSuppressor`'s short-block onset margin).
@Suite struct ShortBlockTalkerOnsetTests {
    static let rate = 16000
    static let block = 80
    static let onsetSeconds = 4.0

    /// Far-end sound throughout over a filter that leaves `leftover` of the echo, and a talker of `talkerRMS` from the
    /// onset; in the `overshootBlocks` blocks after the suppressor's detector first hears the talker, the filter's
    /// estimate overshoots the echo by `overshoot` times it. Returns the suppressor's output (on the input's time
    /// base) and the talker.
    static func run(leftover: Float, overshoot: Float, overshootBlocks: Int, talkerRMS: Float)
        -> (output: [Float], near: [Float]) {
        let fixture = EchoSceneFixture(sampleRate: rate)
        let count = Int((onsetSeconds + 1) * Double(rate)), onset = Int(onsetSeconds * Double(rate))
        let far = fixture.noise(count: count, rms: 0.1, seed: 41)
        let echo = EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: 2, seed: 42),
                                             gain: 0.5, count: count)
        let talker = fixture.noise(count: count - onset, rms: talkerRMS, seed: 43)
        var near = [Float](repeating: 0, count: count)
        for i in onset..<count { near[i] = talker[i - onset] }
        let noise = fixture.noise(count: count, rms: 0.0005, seed: 44)
        let suppressor = ResidualEchoSuppressor(sampleRate: rate, blockFrameCount: block)
        var output = [Float](repeating: 0, count: count), estimate = [Float](repeating: 0, count: block)
        var heardBlock: Int?
        for (index, start) in stride(from: 0, through: count - block, by: block).enumerated() {
            let overshooting = heardBlock.map { index > $0 && index <= $0 + overshootBlocks } ?? false
            for i in 0..<block {
                estimate[i] = echo[start + i] * (1 - leftover + (overshooting ? overshoot : 0))
                output[start + i] = echo[start + i] + near[start + i] + noise[start + i] - estimate[i]
            }
            output.withUnsafeMutableBufferPointer { o in
                estimate.withUnsafeBufferPointer { y in
                    far.withUnsafeBufferPointer { x in
                        suppressor.process(output: UnsafeMutableBufferPointer(rebasing: o[start..<start + block]),
                                           echoEstimate: y,
                                           reference: UnsafeBufferPointer(rebasing: x[start..<start + block]))
                    }
                }
            }
            if start >= onset && heardBlock == nil && suppressor.detector.nearEndActive { heardBlock = index }
        }
        let latency = suppressor.latencyFrames
        return (Array(output[latency...]) + [Float](repeating: 0, count: latency), near)
    }

    /// A filter that leaves 8-10 dB of the echo (a clipping loudspeaker's, a drifting path's) overshoots it by twice
    /// the echo in the two blocks after the talker is first heard. Taken for the filter's error, the block gave the
    /// near end its quiet back, and the talker went unheard for the rest of the half second: −30.2 to −30.5 dB over
    /// it; −1.9 to −2.7 dB heard.
    @Test("a talker whose first block after the onset the filter overshoots is heard",
          arguments: [(Float(0.3), Float(0.06)), (0.4, 0.06), (0.4, 0.08)])
    func talkerAfterAnOvershootIsHeard(leftover: Float, talkerRMS: Float) {
        let (output, near) = Self.run(leftover: leftover, overshoot: 2, overshootBlocks: 2, talkerRMS: talkerRMS)
        let onset = Int(Self.onsetSeconds * Double(Self.rate))
        let gain = EchoSceneProcessingTests.nearGainDB(output, near: near, frames: onset..<(onset + Self.rate / 2))
        #expect(gain > -6, "talker \(gain) dB over the half second after the onset")
    }
}
