import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct PolyphaseDecimatorTests {
    /// Decimates `input` in pieces of `blockFrames`, as a device period would arrive.
    static func decimate(_ input: [Float], with decimator: PolyphaseDecimator, blockFrames: Int) -> [Float] {
        var output: [Float] = []
        var scratch = [Float](repeating: 0, count: decimator.maximumOutputFrames(inputFrames: blockFrames))
        var start = 0
        while start < input.count {
            let end = min(start + blockFrames, input.count)
            let (consumed, produced) = input[start..<end].withUnsafeBufferPointer { block in
                scratch.withUnsafeMutableBufferPointer { decimator.process(block, into: $0) }
            }
            #expect(consumed == end - start)
            output += scratch[0..<produced]
            start = end
        }
        return output
    }

    /// A copied decimator (and a converter made like another) gives exactly the frames of a fresh one, whatever
    /// the original has processed: the same table, a history of its own.
    @Test func aCopyConvertsLikeAFreshOne() throws {
        let input = SyntheticAudio.speechLike(sampleRate: 44100, frameCount: 22050)
        let original = try PolyphaseDecimator(inputRate: 44100, outputRate: 16000, quality: 5)
        let fresh = Self.decimate(input, with: original, blockFrames: 441)
        let copy = PolyphaseDecimator(copying: original)
        #expect(Self.decimate(input, with: copy, blockFrames: 441) == fresh)
        #expect(copy.tapCount == original.tapCount && copy.phaseCount == original.phaseCount)
        let converter = try RateConverter(inputRate: 44100, outputRate: 16000, maximumInputFrames: 441)
        let twin = try RateConverter(like: converter, maximumInputFrames: 441)
        func convert(_ rateConverter: RateConverter) -> [Float] {
            var output: [Float] = []
            var scratch = [Float](repeating: 0, count: rateConverter.maximumOutputFrames)
            for start in stride(from: 0, to: input.count, by: 441) {
                let produced = input[start..<min(start + 441, input.count)].withUnsafeBufferPointer { block in
                    scratch.withUnsafeMutableBufferPointer { rateConverter.convert(block, into: $0) }
                }
                output += scratch[0..<produced]
            }
            return output
        }
        #expect(convert(twin) == fresh)
        #expect(convert(converter) == fresh)
    }

    /// speexdsp's resampler and the decimator built from it give the same frames (counts and values within float
    /// rounding: about 1e-7 of full scale; a filter off by one tap would be off by about 1e-2 on this signal).
    @Test(arguments: [(48000, 16000, 5, 480), (48000, 16000, 5, 441), (48000, 8000, 5, 7), (32000, 16000, 3, 320),
                      (48000, 16000, 10, 2000), (44100, 16000, 5, 441), (44100, 16000, 5, 97), (48000, 11025, 5, 480),
                      (44100, 8000, 5, 441)])
    func matchesSpeexdsp(setup: (inputRate: Int, outputRate: Int, quality: Int, blockFrames: Int)) throws {
        let decimator = try PolyphaseDecimator(inputRate: setup.inputRate, outputRate: setup.outputRate, quality: setup.quality,
                                               alignsToOutputFrames: false)
        let resampler = try Resampler(inputRate: setup.inputRate, outputRate: setup.outputRate, quality: setup.quality)
        let input = SyntheticAudio.speechLike(sampleRate: setup.inputRate, frameCount: setup.inputRate / 2)
        let expected = DSPTestSupport.resample(input, with: resampler, blockFrames: setup.blockFrames).output
        let output = Self.decimate(input, with: decimator, blockFrames: setup.blockFrames)
        #expect(output.count == expected.count)
        var worst: Float = 0
        for (got, wanted) in zip(output, expected) { worst = max(worst, abs(got - wanted)) }
        #expect(worst < 1e-5)
        #expect(expected.contains { abs($0) > 0.05 }, "the signal must reach the output for the comparison to mean anything")
    }

    /// A tone (3 kHz; 1.5 kHz into 8 kHz) through the decimator, against the same tone at the output rate
    /// `latencyFrames` later: aligned, the output is on the input's time line (measured −106 dB from 44.1 kHz to 8, 16
    /// and 24 kHz); on speexdsp's own grid it is a fraction of an output frame off (0.64 frame from 44.1 to 16 kHz:
    /// −2.7 dB; 0.36 frame to 24 kHz: −11.0 dB). A whole factor is aligned either way (48 to 16 kHz: −107 dB). The
    /// converter takes the decimator's latency.
    @Test(arguments: [(44100, 16000), (44100, 24000), (44100, 8000), (48000, 16000)])
    func alignsTheOutputWithTheInputsTimeLine(rates: (input: Int, output: Int)) throws {
        let frequency = rates.output == 8000 ? 1500.0 : 3000.0
        func mismatchDB(aligned: Bool) throws -> (db: Double, latency: Int) {
            let decimator = try PolyphaseDecimator(inputRate: rates.input, outputRate: rates.output, quality: 5,
                                                   alignsToOutputFrames: aligned)
            let input = SyntheticAudio.sine(frequency: frequency, sampleRate: rates.input, frameCount: rates.input / 2)
            let output = Self.decimate(input, with: decimator, blockFrames: 441)
            let latency = decimator.latencyFrames
            let wanted = SyntheticAudio.sine(frequency: frequency, sampleRate: rates.output, frameCount: output.count,
                                             phase: -2 * Double.pi * frequency * Double(latency) / Double(rates.output))
            let frames = (latency + 200)..<(output.count - 200)
            return (DSPTestSupport.mismatchDB(output[frames], wanted[frames]), latency)
        }
        let aligned = try mismatchDB(aligned: true)
        #expect(aligned.db < -60, "aligned: \(aligned.db) dB off the input's time line")
        if rates.input % rates.output != 0 {
            let speexdsp = try mismatchDB(aligned: false)
            #expect(speexdsp.db > -15, "speexdsp's grid: \(speexdsp.db) dB off the input's time line")
        }
        let converter = try RateConverter(inputRate: rates.input, outputRate: rates.output, maximumInputFrames: 441)
        #expect(converter.latencyFrames == aligned.latency)
    }

    @Test func resetStartsOverLikeANewDecimator() throws {
        let used = try PolyphaseDecimator(inputRate: 48000, outputRate: 16000, quality: 5)
        let fresh = try PolyphaseDecimator(inputRate: 48000, outputRate: 16000, quality: 5)
        _ = Self.decimate(SyntheticAudio.speechLike(sampleRate: 48000, frameCount: 4801), with: used, blockFrames: 480)
        used.reset()
        let sine = SyntheticAudio.sine(frequency: 300, sampleRate: 48000, frameCount: 4800)
        #expect(Self.decimate(sine, with: used, blockFrames: 480) == Self.decimate(sine, with: fresh, blockFrames: 480))
    }

    @Test func takesDownConversionsWithTablesThatFit() throws {
        #expect(throws: SpeexError.self) { try PolyphaseDecimator(inputRate: 16000, outputRate: 48000, quality: 5) }
        #expect(throws: SpeexError.self) { try PolyphaseDecimator(inputRate: 16000, outputRate: 16000, quality: 5) }
        // A drifting clock's ratio (48000 to 47995 Hz: 9599 phases) would need a table of megabytes.
        #expect(throws: SpeexError.self) { try PolyphaseDecimator(inputRate: 48000, outputRate: 47995, quality: 5) }
        let decimator = try PolyphaseDecimator(inputRate: 44100, outputRate: 16000, quality: 5)
        #expect(decimator.phaseCount == 160 && decimator.tapCount % 8 == 0)
    }

    /// With less room than the input needs, it stops where speexdsp would and leaves the rest of the input, which
    /// offered again continues the same stream.
    @Test func fullOutputLeavesInputForTheNextCall() throws {
        let decimator = try PolyphaseDecimator(inputRate: 44100, outputRate: 16000, quality: 5)
        let whole = try PolyphaseDecimator(inputRate: 44100, outputRate: 16000, quality: 5)
        let input = SyntheticAudio.speechLike(sampleRate: 44100, frameCount: 4410)
        var output: [Float] = []
        var scratch = [Float](repeating: 0, count: 50)
        var start = 0
        while start < input.count {
            let (consumed, produced) = input[start...].withUnsafeBufferPointer { rest in
                scratch.withUnsafeMutableBufferPointer { decimator.process(rest, into: $0) }
            }
            #expect(produced <= 50)
            if consumed == 0 && produced == 0 { break }
            output += scratch[0..<produced]
            start += consumed
        }
        #expect(output == Self.decimate(input, with: whole, blockFrames: 4410))
    }

    /// A capture chain's converter takes every frame of a device period whatever its length (441 frames at 44.1 kHz
    /// into 11025 Hz: a quarter frame left over each time), so a stream keeps its length.
    @Test func rateConverterKeepsEveryFrame() throws {
        let converter = try RateConverter(inputRate: 44100, outputRate: 11025, maximumInputFrames: 441)
        let period = [Float](repeating: 0.25, count: 441)
        var output = [Float](repeating: 0, count: converter.maximumOutputFrames)
        var produced = 0
        for _ in 0..<100 {
            produced += period.withUnsafeBufferPointer { input in
                output.withUnsafeMutableBufferPointer { converter.convert(input, into: $0) }
            }
        }
        #expect(produced == 100 * 441 / 4)
    }

    /// The SIMD conversion rounds halves away from zero and clips, as `Float.rounded()` and the scalar tail do.
    @Test func int16ConversionRoundsAndClipsLikeRounded() {
        let halves: [Float] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.49999997, 32766.5, -32767.5]
        let source = halves.map { $0 / 32768 } + [1, -1, 2, -2, 0.999, -0.999, 1e-9, 0]
        var simd = [Int16](repeating: 0, count: source.count)
        source.withUnsafeBufferPointer { input in
            simd.withUnsafeMutableBufferPointer { SampleConversion.int16(from: input, into: $0) }
        }
        let expected = source.map { Int16(min(max(($0 * 32768).rounded(), -32768), 32767)) }
        #expect(simd == expected)
        #expect(simd.prefix(6) == [1, 2, 3, -1, -2, -3])
    }
}
