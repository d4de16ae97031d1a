import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct ResamplerTests {
    /// The output must match a sine generated directly at the output rate, delayed by the reported input latency.
    /// Off by one input frame the error is about 0.065; aligned it is about 1e-5. The first two latencies' worth of
    /// output is skipped: the filter spans twice its latency and only then holds signal on both sides.
    static func maximumError(of output: [Float], frequency: Double, amplitude: Float, resampler: Resampler,
                             channelCount: Int = 1, channel: Int = 0) -> Float {
        let delaySeconds = Double(resampler.inputLatencyFrames) / Double(resampler.inputRate)
        let frameCount = output.count / channelCount
        var maximumError: Float = 0
        for frame in (2 * resampler.outputLatencyFrames)..<(frameCount - 20) {
            let time = Double(frame) / Double(resampler.outputRate) - delaySeconds
            let expected = amplitude * Float(sin(2 * Double.pi * frequency * time))
            maximumError = max(maximumError, abs(output[frame * channelCount + channel] - expected))
        }
        return maximumError
    }

    @Test(arguments: [(48000, 16000), (16000, 48000), (44100, 16000), (48000, 11025)])
    func matchesSineGeneratedAtTargetRate(rates: (input: Int, output: Int)) throws {
        let resampler = try Resampler(inputRate: rates.input, outputRate: rates.output, quality: 5)
        let input = SyntheticAudio.sine(frequency: 1000, sampleRate: rates.input, frameCount: rates.input / 2, amplitude: 0.5)
        let (output, allConsumed) = DSPTestSupport.resample(input, with: resampler, blockFrames: 441)
        #expect(allConsumed, "maximumOutputFrames left too little room")
        #expect(abs(output.count - rates.output / 2) <= 1)
        #expect(Self.maximumError(of: output, frequency: 1000, amplitude: 0.5, resampler: resampler) < 1e-3)
    }

    @Test func keepsStereoChannelsApart() throws {
        let resampler = try Resampler(inputRate: 48000, outputRate: 16000, quality: 4, channelCount: 2)
        let left = SyntheticAudio.sine(frequency: 500, sampleRate: 48000, frameCount: 24000, amplitude: 0.5)
        let right = SyntheticAudio.sine(frequency: 1500, sampleRate: 48000, frameCount: 24000, amplitude: 0.25)
        let input = zip(left, right).flatMap { [$0, $1] }
        var output = [Float](repeating: 0, count: 2 * resampler.maximumOutputFrames(inputFrames: 24000))
        let (inputFrames, outputFrames) = input.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { resampler.process(input: source, output: $0) }
        }
        #expect(inputFrames == 24000 && outputFrames == 8000)
        let interleaved = Array(output[0..<(2 * outputFrames)])
        #expect(Self.maximumError(of: interleaved, frequency: 500, amplitude: 0.5, resampler: resampler,
                                  channelCount: 2, channel: 0) < 1e-3)
        #expect(Self.maximumError(of: interleaved, frequency: 1500, amplitude: 0.25, resampler: resampler,
                                  channelCount: 2, channel: 1) < 1e-3)
    }

    @Test func resetStartsOverLikeANewResampler() throws {
        let used = try Resampler(inputRate: 48000, outputRate: 16000, quality: 3)
        let fresh = try Resampler(inputRate: 48000, outputRate: 16000, quality: 3)
        let noise = SyntheticAudio.speechLike(sampleRate: 48000, frameCount: 4800)
        _ = DSPTestSupport.resample(noise, with: used, blockFrames: 480)
        used.reset()
        let sine = SyntheticAudio.sine(frequency: 300, sampleRate: 48000, frameCount: 4800)
        #expect(DSPTestSupport.resample(sine, with: used, blockFrames: 480).output
            == DSPTestSupport.resample(sine, with: fresh, blockFrames: 480).output)
    }

    @Test func emptyBuffersDoNothing() throws {
        let resampler = try Resampler(inputRate: 16000, outputRate: 48000, quality: 3)
        var output = [Float](repeating: 0, count: 16)
        let result = output.withUnsafeMutableBufferPointer { resampler.process(input: UnsafeBufferPointer(start: nil, count: 0), output: $0) }
        #expect(result == (0, 0))
    }

    @Test func refusesBadArguments() {
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 0, outputRate: 16000, quality: 3) }
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 48000, outputRate: -16000, quality: 3) }
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 48000, outputRate: 16000, quality: 11) }
        #expect(throws: SpeexError.self) { try Resampler(inputRate: 48000, outputRate: 16000, quality: 3, channelCount: 0) }
        let text = String(describing: SpeexError.resampler(code: 3, message: "Invalid argument."))
        #expect(text == "speex resampler error 3: Invalid argument.")
    }
}
