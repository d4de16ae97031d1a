import CAllocCounter
import Foundation
import Testing
import VoiceIO

/// A microphone that clips on the echo's peaks (a laptop's loudspeaker turned up beside it): the linear filter learns
/// from the samples that did not clip instead of pausing on every block with one that did, and the loudspeaker's
/// saturation is not learned from them.
@Suite("A clipping microphone")
struct MicrophoneClippingTests {
    typealias Scene = EchoSceneProcessingTests

    static let seconds = 16.0

    /// The far end's speech-like sound and a microphone whose echo, 18 dB over it, clips at full scale; checks that
    /// more than 2 % of the samples clipped.
    static func scene() -> (far: [Float], microphone: [Float]) {
        let far = Scene.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 131)
        let echo = Scene.roomEcho(far, bulkMilliseconds: 40, seed: 132, gain: 8)
        let loud = Scene.mix(echo, Scene.fixture.noise(count: far.count, rms: 0.001, seed: 133))
        let clippedShare = Double(loud.filter { abs($0) >= 1 }.count) / Double(loud.count)
        #expect(clippedShare > 0.02, "only \(clippedShare * 100) % of the samples clipped")
        return (far, loud.map { max(-1, min(1, $0)) })
    }

    @Test("echo clipped at full scale on its peaks: cancelled, and not taken for a clipping loudspeaker")
    func clippingMicrophone() throws {
        let (far, microphone) = Self.scene()
        let seconds = Self.seconds
        let (output, processor) = try Scene.process(microphone: microphone, far: far)

        let erle = Scene.erleDB(microphone, output, from: 3, to: seconds)
        // Measured 32.5 dB; 26 dB from 3 to 10 s when every block with a clipped sample held the filter's adaptation.
        // 22.6 dB while the detector read the clipping's distortion for a talker (once the filter had learned the
        // echo: 13.7 dB over the last second; a filter whose start-up was slowed by the hot microphone learned it only
        // by 10 s, and 3-10 s measured 45.6), 17.0 when it learned it by 1 s.
        #expect(erle > 28, "ERLE \(erle) dB")
        // Learned from the clipped samples too, the saturation found a knee at -12.5 dBFS.
        #expect(processor.loudspeakerKneeDBFS == nil, "the microphone's clipping taken for the loudspeaker's")
    }

    /// The clipped blocks' own work (the output without the clipping's distortion, which the detector reads) runs on
    /// the real-time thread like the rest of the pipeline.
    @Test("a clipping microphone's blocks allocate and lock nothing")
    func clippedBlocksAllocateNothing() throws {
        let (far, microphone) = Self.scene()
        let block = Scene.rate / 100
        let pipeline = try EchoPipeline(sampleRate: Scene.rate, blockFrameCount: block)
        let clippedBlocks = stride(from: Scene.rate, through: microphone.count - block, by: block).filter { start in
            microphone[start..<(start + block)].contains { abs($0) >= 1 }
        }.count
        let (allocations, locks) = PipelineRealTimeSupport.count(pipeline, microphone: microphone, reference: far,
                                                                 countingFrom: Scene.rate)
        #expect(clippedBlocks > 100, "only \(clippedBlocks) clipped blocks were counted")
        #expect(allocations == 0, "allocations over the clipping microphone's blocks: \(allocations)")
        if LockCounting.isActive { #expect(locks == 0, "lock operations over the clipping microphone's blocks: \(locks)") }
        alloc_counter_start()
        let control = [Float](repeating: 1, count: block)
        #expect(alloc_counter_stop() >= 1 && control.count == block, "the control's array must be counted")
    }
}
