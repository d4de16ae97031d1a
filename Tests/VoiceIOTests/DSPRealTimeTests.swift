import CAllocCounter
import Testing
import VoiceIO
import VoiceIOSimulation

/// The calls documented as real-time safe allocate nothing once their owners exist.
@Suite struct DSPRealTimeTests {
    @Test func processingAllocatesNothing() throws {
        let resampler = try Resampler(inputRate: 48000, outputRate: 16000, quality: 5)
        let canceller = try EchoCanceller(frameCount: 160, filterLengthMilliseconds: 100, sampleRate: 16000)
        let preprocessor = try Preprocessor(frameCount: 160, sampleRate: 16000)
        preprocessor.isAGCEnabled = true
        // The far end alone, through a loudspeaker that clips: the filter learns the saturation too.
        canceller.isFarEndAlone = true
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: 480)
        let resampled = UnsafeMutableBufferPointer<Float>.allocate(capacity: resampler.maximumOutputFrames(inputFrames: 480))
        let microphone = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 160)
        let reference = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 160)
        let output = UnsafeMutableBufferPointer<Int16>.allocate(capacity: 160)
        let taps = UnsafeMutableBufferPointer<Int32>.allocate(capacity: canceller.impulseResponseFrameCount)
        var tailEstimator = EchoTailEstimator(sampleRate: 16000, blockFrameCount: 160)
        defer { [input, resampled].forEach { $0.deallocate() }; [microphone, reference, output].forEach { $0.deallocate() } }
        defer { taps.deallocate() }
        let far = SyntheticAudio.speechLike(sampleRate: 48000, frameCount: 48000)
        var speechBlocks = 0

        func process(block: Int) {
            for index in 0..<480 { input[index] = far[block * 480 + index] }
            let (_, produced) = resampler.process(input: UnsafeBufferPointer(input), output: resampled)
            for index in 0..<min(produced, 160) {
                reference[index] = Int16(resampled[index] * 32767)
                microphone[index] = max(-8000, min(8000, reference[index])) / 3
            }
            canceller.process(microphone: microphone.baseAddress!, reference: reference.baseAddress!, output: output.baseAddress!)
            if preprocessor.process(output.baseAddress!) { speechBlocks += 1 }
            _ = LevelMeter.measure(UnsafeBufferPointer(resampled))
            _ = LevelMeter.measure(UnsafeBufferPointer(output))
            _ = preprocessor.agcGainDB
            if block % 25 == 0 {
                canceller.impulseResponse(into: taps)
                tailEstimator.update(taps: UnsafeBufferPointer(taps), scale: canceller.impulseResponseScale)
            }
        }
        // One block first: unoptimised builds instantiate generic type metadata on a function's first call.
        process(block: 0)

        alloc_counter_start()
        for block in 1..<100 { process(block: block) }
        let kneeLevel = canceller.loudspeakerKneeLevel
        resampler.reset()
        canceller.reset()
        let allocations = alloc_counter_stop()
        #expect(allocations == 0)
        #expect(kneeLevel != nil, "the saturation was not learned: its path was not run")
        #expect(speechBlocks > 0)
    }
}
