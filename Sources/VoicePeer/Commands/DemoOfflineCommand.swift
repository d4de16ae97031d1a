import ArgumentParser
import Foundation
import VoiceIO

/// A short offline run of the foundation wrappers on generated audio: a speech-like far end plays through a
/// synthetic room at 48 kHz, both sides are resampled to 16 kHz, the echo is cancelled and suppressed, and the
/// ERLE and levels of every second are printed. A placeholder until the voice-processing unit exists.
struct DemoOfflineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo-offline",
        abstract: "Cancel a synthetic echo offline and print ERLE and levels per second (writes WAVs to a temp folder)."
    )

    @Option(help: "Seconds of audio to generate.")
    var seconds = 6

    func run() throws {
        guard (2...60).contains(seconds) else { throw ValidationError("--seconds must be 2–60") }
        let (deviceRate, voiceRate) = (48000, 16000)
        let far = SyntheticAudio.speechLike(sampleRate: deviceRate, frameCount: seconds * deviceRate, amplitude: 0.5)
        let room = SyntheticAudio.echoPath(sampleRate: deviceRate, delayMilliseconds: 12, tailMilliseconds: 40, gain: 0.3)
        let microphone = SyntheticAudio.convolve(far, with: room)

        let far16 = Self.int16(try Self.resample(far, from: deviceRate, to: voiceRate))
        let microphone16 = Self.int16(try Self.resample(microphone, from: deviceRate, to: voiceRate))
        let blockFrames = voiceRate / 100
        let canceller = try EchoCanceller(frameCount: blockFrames, filterLengthMilliseconds: 100, sampleRate: voiceRate)
        let preprocessor = try Preprocessor(frameCount: blockFrames, sampleRate: voiceRate)
        preprocessor.link(echoCanceller: canceller)
        var processed = [Int16](repeating: 0, count: microphone16.count)
        microphone16.withUnsafeBufferPointer { microphone in
            far16.withUnsafeBufferPointer { far in
                processed.withUnsafeMutableBufferPointer { out in
                    for start in stride(from: 0, through: out.count - blockFrames, by: blockFrames) {
                        canceller.process(microphone: microphone.baseAddress! + start,
                                          reference: far.baseAddress! + start, output: out.baseAddress! + start)
                        preprocessor.process(out.baseAddress! + start)
                    }
                }
            }
        }

        print("second  echo reduction dB  far dBFS  mic dBFS  out dBFS  (RMS at 16 kHz; AEC + residual echo suppression)")
        for second in 0..<seconds {
            let range = (second * voiceRate)..<min((second + 1) * voiceRate, processed.count)
            let levels = [far16, microphone16, processed].map { samples in
                samples[range].withUnsafeBufferPointer { LevelMeter.measure($0).rmsDBFS }
            }
            print(String(format: "%6d  %17.1f  %8.1f  %8.1f  %8.1f", second + 1, levels[1] - levels[2],
                         levels[0], levels[1], levels[2]))
        }

        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("voicepeer-demo-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Self.write(far, to: folder.appendingPathComponent("far-48k.wav").path, format: StreamFormat(sampleRate: deviceRate))
        try Self.write(microphone, to: folder.appendingPathComponent("mic-48k.wav").path, format: StreamFormat(sampleRate: deviceRate))
        let writer = try AudioFileWriter(path: folder.appendingPathComponent("out-16k.wav").path,
                                         format: StreamFormat(sampleRate: voiceRate, sampleType: .int16))
        try processed.withUnsafeBufferPointer { try writer.write($0) }
        print("wrote far-48k.wav, mic-48k.wav and out-16k.wav to \(folder.path)")
    }

    static func resample(_ samples: [Float], from inputRate: Int, to outputRate: Int) throws -> [Float] {
        let resampler = try Resampler(inputRate: inputRate, outputRate: outputRate, quality: 5)
        var output = [Float](repeating: 0, count: resampler.maximumOutputFrames(inputFrames: samples.count))
        let (_, produced) = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { resampler.process(input: input, output: $0) }
        }
        return Array(output[0..<produced])
    }

    static func int16(_ samples: [Float]) -> [Int16] {
        samples.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
    }

    static func write(_ samples: [Float], to path: String, format: StreamFormat) throws {
        let writer = try AudioFileWriter(path: path, format: format)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
    }
}
