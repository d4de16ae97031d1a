import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct PreprocessorTests {
    static let sampleRate = 16000
    static let blockFrames = 160

    /// Runs `samples` through `preprocessor` block by block; returns the output and each block's VAD decision.
    static func run(_ samples: [Int16], through preprocessor: Preprocessor) -> (output: [Int16], speech: [Bool]) {
        var output = samples
        var speech: [Bool] = []
        output.withUnsafeMutableBufferPointer { buffer in
            for start in stride(from: 0, through: buffer.count - blockFrames, by: blockFrames) {
                speech.append(preprocessor.process(buffer.baseAddress! + start))
            }
        }
        return (output, speech)
    }

    static func fraction(_ decisions: ArraySlice<Bool>) -> Double {
        Double(decisions.filter { $0 }.count) / Double(decisions.count)
    }

    @Test func agcRaisesAQuietTalker() throws {
        let preprocessor = try Preprocessor(frameCount: Self.blockFrames, sampleRate: Self.sampleRate)
        preprocessor.isDenoiseEnabled = false
        preprocessor.isAGCEnabled = true
        preprocessor.agcTargetLevel = 8000
        preprocessor.agcMaxGainDB = 30
        let quiet = DSPTestSupport.int16(SyntheticAudio.speechLike(sampleRate: Self.sampleRate, frameCount: 4 * Self.sampleRate, amplitude: 0.01))
        let (output, _) = Self.run(quiet, through: preprocessor)
        let lastSecond = (quiet.count - Self.sampleRate)..<quiet.count
        let gain = -DSPTestSupport.reductionDB(reference: quiet[lastSecond], residual: output[lastSecond])
        #expect(gain > 10)
        #expect(preprocessor.agcGainDB > 10)
    }

    @Test func agcOffLeavesTheLevelAlone() throws {
        let preprocessor = try Preprocessor(frameCount: Self.blockFrames, sampleRate: Self.sampleRate)
        preprocessor.isDenoiseEnabled = false
        let quiet = DSPTestSupport.int16(SyntheticAudio.speechLike(sampleRate: Self.sampleRate, frameCount: 2 * Self.sampleRate, amplitude: 0.01))
        let (output, _) = Self.run(quiet, through: preprocessor)
        let lastSecond = (quiet.count - Self.sampleRate)..<quiet.count
        let gain = -DSPTestSupport.reductionDB(reference: quiet[lastSecond], residual: output[lastSecond])
        #expect(abs(gain) < 1)
    }

    @Test func vadTellsSpeechFromSilence() throws {
        let preprocessor = try Preprocessor(frameCount: Self.blockFrames, sampleRate: Self.sampleRate)
        preprocessor.isVADEnabled = true
        let silence = [Int16](repeating: 0, count: Self.sampleRate)
        let loud = DSPTestSupport.int16(SyntheticAudio.speechLike(sampleRate: Self.sampleRate, frameCount: 2 * Self.sampleRate, amplitude: 0.5))
        let (_, speech) = Self.run(silence + loud + silence, through: preprocessor)
        let blocksPerSecond = Self.sampleRate / Self.blockFrames
        #expect(Self.fraction(speech[0..<blocksPerSecond]) < 0.1)
        #expect(Self.fraction(speech[blocksPerSecond..<(3 * blocksPerSecond)]) > 0.8)
        // After a 200 ms hangover the trailing silence is silence again.
        #expect(Self.fraction(speech[(3 * blocksPerSecond + 20)...]) < 0.1)
    }

    @Test func denoiseAttenuatesSteadyNoise() throws {
        let preprocessor = try Preprocessor(frameCount: Self.blockFrames, sampleRate: Self.sampleRate)
        preprocessor.isDenoiseEnabled = true
        preprocessor.noiseSuppressionDB = -25
        var random = 12345 as UInt32
        let noise = (0..<(3 * Self.sampleRate)).map { _ -> Int16 in
            random = random &* 1_664_525 &+ 1_013_904_223
            return Int16(truncatingIfNeeded: Int32(bitPattern: random) >> 22)
        }
        let (output, _) = Self.run(noise, through: preprocessor)
        let lastSecond = (noise.count - Self.sampleRate)..<noise.count
        #expect(DSPTestSupport.reductionDB(reference: noise[lastSecond], residual: output[lastSecond]) > 10)
    }

    @Test func propertiesReadBackWhatWasSet() throws {
        let preprocessor = try Preprocessor(frameCount: Self.blockFrames, sampleRate: Self.sampleRate)
        preprocessor.noiseSuppressionDB = -20
        preprocessor.echoSuppressionDB = -45
        preprocessor.echoSuppressionActiveDB = -12
        preprocessor.agcTargetLevel = 12000
        preprocessor.agcMaxGainDB = 24
        preprocessor.isAGCEnabled = true
        preprocessor.isVADEnabled = true
        preprocessor.isDenoiseEnabled = false
        #expect(preprocessor.noiseSuppressionDB == -20)
        #expect(preprocessor.echoSuppressionDB == -45)
        #expect(preprocessor.echoSuppressionActiveDB == -12)
        #expect(preprocessor.agcTargetLevel == 12000)
        #expect(preprocessor.agcMaxGainDB == 24)
        #expect(preprocessor.isAGCEnabled && preprocessor.isVADEnabled && !preprocessor.isDenoiseEnabled)
    }

    @Test func refusesBadArguments() {
        #expect(throws: SpeexError.self) { try Preprocessor(frameCount: 0, sampleRate: 16000) }
        #expect(throws: SpeexError.self) { try Preprocessor(frameCount: -1, sampleRate: 16000) }
        #expect(throws: SpeexError.self) { try Preprocessor(frameCount: 160, sampleRate: 999) }
    }
}
