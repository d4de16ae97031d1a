import Glibc
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

    /// A near talker (Tests/Fixtures) as loud as the far end's speech, which a digital loopback returns at its own
    /// level (about 0 dB speech to echo), `seconds` long: at the device rate to add to the capture, and at the
    /// voice rate to find it in the output.
    static func nearTalker(seconds: Double, deviceRate: Int, voiceRate: Int) throws -> (device: [Float], voice: [Float]) {
        let far = try Signal.farSpeech(seconds: 4)
        let atDeviceRate = try Signal.fixture("near-speech-16k.wav", sampleRate: deviceRate)
        let scale = Float(pow(10, (Signal.powerDB(far) - Signal.powerDB(atDeviceRate)) / 20))
        let voice = try Signal.fixture("near-speech-16k.wav", sampleRate: voiceRate)
        return (atDeviceRate.prefix(Int(seconds * Double(deviceRate))).map { $0 * scale },
                voice.prefix(Int(seconds * Double(voiceRate))).map { $0 * scale })
    }

    /// The headset case both real servers run (`theUnitKeepsAHeadsetsTalkerOnPipeWire`, `...OnPulseAudio`): the unit
    /// captures a sink that hears none of its playback, and a talker 13 dB under the far end's speech is added to
    /// that capture from `headsetTalkerFromSeconds` over `headsetSeconds` of capture.
    static let headsetSeconds = 16.6, headsetTalkerFromSeconds = 5.0

    /// The headset's talker: `nearTalker` twice over (12 s), 13 dB down.
    static func headsetTalker(deviceRate: Int, voiceRate: Int) throws -> (device: [Float], voice: [Float]) {
        let one = try nearTalker(seconds: 6, deviceRate: deviceRate, voiceRate: voiceRate)
        let scale: Float = 0.22
        return ((one.device + one.device).map { $0 * scale }, (one.voice + one.voice).map { $0 * scale })
    }

    /// The headset's talker gain in `processed` per 3 s from a second after it starts, in dB, after checking what both
    /// servers are held to: the capture heard none of the far end before the talker, and the talker keeps -3 dB or
    /// better in every window.
    static func checkHeadset(microphone: [Float], deviceRate: Int, processed: [Float], talker: [Float],
                             voiceRate: Int) -> [Double] {
        let talkerFrom = headsetTalkerFromSeconds
        let gains = stride(from: talkerFrom + 1, to: headsetSeconds - 2.9, by: 3).map {
            talkerGain(processed: processed, talker: talker, voiceRate: voiceRate, fromSeconds: talkerFrom,
                       span: $0...($0 + 3)).gainDB
        }
        #expect(Signal.powerDB(microphone, to: Int(talkerFrom * Double(deviceRate))) < -60,
                "the headset's capture heard the far end")
        for (index, gain) in gains.enumerated() {
            #expect(gain >= -3, "near talker at \(gain) dB from \(talkerFrom + 1 + 3 * Double(index)) s")
        }
        return gains
    }

    /// `output` along `reference` at `lag` over every `step`th of `frames`, and the reference's energy there: the
    /// reference's frame 0 is output frame `referenceStart` (silence outside it).
    static func alignedSums(of reference: [Float], from referenceStart: Int = 0, in output: [Float], frames: Range<Int>,
                            lag: Int, step: Int = 1) -> (cross: Double, reference: Double) {
        var (cross, energy) = (0.0, 0.0)
        for index in stride(from: frames.lowerBound, to: frames.upperBound, by: step) {
            let referenceIndex = index - referenceStart - lag
            let r = referenceIndex >= 0 && referenceIndex < reference.count ? Double(reference[referenceIndex]) : 0
            cross += Double(output[index]) * r
            energy += r * r
        }
        return (cross, energy)
    }

    /// The lag (0...`maximumLag` frames) at which `output` over `frames` best matches `reference` (as in
    /// `alignedSums`): the most output along the reference at that lag, per unit of the reference's level there.
    static func bestLag(of reference: [Float], from referenceStart: Int = 0, in output: [Float], frames: Range<Int>,
                        maximumLag: Int, step: Int = 1) -> Int {
        let scores = (0...maximumLag).map { lag in
            let s = alignedSums(of: reference, from: referenceStart, in: output, frames: frames, lag: lag, step: step)
            return s.cross / max(s.reference, 1e-20).squareRoot()
        }
        return scores.indices.max { scores[$0] < scores[$1] } ?? 0
    }

    /// The near talker's least-squares gain in `processed` (voice rate) over `span` seconds, `talker` (voice rate)
    /// starting at `fromSeconds`, at the lag (0-100 ms, the unit's latency) that correlates best, in dB; and that
    /// correlation.
    static func talkerGain(processed: [Float], talker: [Float], voiceRate: Int, fromSeconds: Double,
                           span: ClosedRange<Double>) -> (gainDB: Double, correlation: Double) {
        let rate = Double(voiceRate), start = Int(fromSeconds * rate)
        let frames = Int(span.lowerBound * rate)..<min(Int(span.upperBound * rate), processed.count)
        let searched = frames.lowerBound..<min(frames.upperBound, frames.lowerBound + Int(rate))
        let lag = bestLag(of: talker, from: start, in: processed, frames: searched, maximumLag: Int(0.1 * rate))
        let s = alignedSums(of: talker, from: start, in: processed, frames: frames, lag: lag)
        let outputEnergy = frames.reduce(0.0) { $0 + Double(processed[$1]) * Double(processed[$1]) }
        let gain = s.cross / max(s.reference, 1e-20)
        return (20 * log10(max(abs(gain), 1e-10)), s.cross / max((s.reference * outputEnergy).squareRoot(), 1e-20))
    }
}
