import Testing
@testable import VoiceIO
import VoiceIOSimulation

/// The voice unit's echo run on a real loopback, shared by the PulseAudio and PipeWire echo tests: far-end speech
/// is the render callback's voice and the processed voice is recorded until the device's tap holds its capture.
enum EchoRunSupport {
    /// Runs the unit (AGC off, bypass as given) on `device` until its microphone recorder is full (`seconds` of
    /// capture); `whileRunning` is called once the unit has started. Returns the stopped unit (statistics,
    /// configuration) and the processed voice (voice rate).
    static func run(on device: StallingTapDevice, voiceRate: Int, seconds: Double, bypass: Bool,
                    whileRunning: (VoiceProcessingIO) -> Void = { _ in }) throws
        -> (unit: VoiceProcessingIO, processed: [Float]) {
        let unit = try VoiceProcessingIO(device: device, voiceFormat: try StreamFormat.voice(sampleRate: voiceRate))
        unit.enableAGC = false
        unit.bypassVoiceProcessing = bypass
        let far = VoiceSource(try Signal.farSpeech(seconds: seconds + 1, sampleRate: voiceRate))
        unit.setRenderCallback { far.render($0) }
        let processed = FrameRecorder(capacity: Int(seconds * Double(voiceRate)))
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: 4096)
        defer { scratch.deallocate() }
        unit.setInputCallback { [unowned unit] _ in
            while true {
                let count = unit.readInput(into: .float32(scratch))
                guard count > 0 else { return }
                processed.append(UnsafeBufferPointer(rebasing: scratch[..<count]))
            }
        }
        try unit.start()
        whileRunning(unit)
        let filled = ALSATestSupport.wait(upToSeconds: seconds + 10) { device.microphone.isFull }
        unit.stop()
        try #require(filled, "the loopback delivered \(device.microphone.frameCount) frames")
        return (unit, processed.frames)
    }
}
