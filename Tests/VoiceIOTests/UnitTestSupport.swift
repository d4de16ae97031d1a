import Foundation
import VoiceIO
import VoiceIOSimulation

/// A simulated room with a unit on top, run on the virtual clock; collects the processed voice.
final class UnitHarness {
    let room: SimulatedRoom
    let unit: VoiceProcessingIO
    private let far: VoiceSource
    private(set) var output: [Float] = []
    private var drain: [Float]

    init(room configuration: SimulatedRoomConfiguration, voiceRate: Int = 16000, far: [Float] = [],
         agc: Bool = false, recordSeconds: Double = 0, settings: VoiceProcessingSettings = .init()) throws {
        var configuration = configuration
        configuration.clock = .virtual
        room = try SimulatedRoom(configuration: configuration)
        if recordSeconds > 0 { room.startRecording(seconds: recordSeconds) }
        unit = try VoiceProcessingIO(device: room, voiceFormat: try StreamFormat.voice(sampleRate: voiceRate),
                                     settings: settings)
        unit.enableAGC = agc
        let source = VoiceSource(far)
        self.far = source
        unit.setRenderCallback { source.render($0) }
        drain = [Float](repeating: 0, count: voiceRate)
        try unit.start()
    }

    /// Runs `periods` device periods in chunks, reading the processed voice after each chunk.
    func run(periods: Int) throws {
        var left = periods
        while left > 0 {
            let chunk = min(left, 20)
            try room.run(periods: chunk)
            left -= chunk
            collect()
        }
    }

    func run(seconds: Double) throws {
        try run(periods: Int(seconds * 1000 / room.configuration.periodMilliseconds))
    }

    /// Reads whatever processed voice is ready into `output`.
    func collect() {
        let count = drain.withUnsafeMutableBufferPointer { unit.readInput(into: .float32($0)) }
        output.append(contentsOf: drain[..<count])
    }
}

enum Signal {
    /// Mean square of `samples[range]` in dB (full scale 1 → 0 dB).
    static func powerDB(_ samples: [Float], from start: Int = 0, to end: Int? = nil) -> Double {
        let stop = min(end ?? samples.count, samples.count)
        guard stop > start else { return -200 }
        var sum = 0.0
        for index in start..<stop { sum += Double(samples[index]) * Double(samples[index]) }
        return 10 * log10(max(sum / Double(stop - start), 1e-20))
    }

    /// Estimated frequency from positive-going zero crossings (linear interpolation) over `samples`.
    static func frequency(_ samples: ArraySlice<Float>, sampleRate: Int) -> Double {
        var crossings: [Double] = []
        var previous = samples.first ?? 0
        for (offset, sample) in samples.dropFirst().enumerated() {
            if previous < 0 && sample >= 0 {
                crossings.append(Double(offset) + Double(-previous / (sample - previous)))
            }
            previous = sample
        }
        guard let first = crossings.first, let last = crossings.last, crossings.count > 2 else { return 0 }
        return Double(crossings.count - 1) * Double(sampleRate) / (last - first)
    }

    /// A fixture from Tests/Fixtures, mono, converted to `sampleRate`.
    static func fixture(_ name: String, sampleRate: Int) throws -> [Float] {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try AudioFileReader.monoSamples(path: folder.appendingPathComponent("Fixtures/\(name)").path,
                                               sampleRate: sampleRate, quality: 5)
    }

    /// Held music from Debian's asterisk-moh-opsound-wav (8 kHz; scripts/test installs it).
    static let heldMusicPath = "/usr/share/asterisk/moh/macroform-cold_day.wav"
    static var isHeldMusicInstalled: Bool { FileManager.default.fileExists(atPath: heldMusicPath) }

    /// The first `seconds` of the held music at `sampleRate`.
    static func heldMusic(seconds: Double, sampleRate: Int = 16000) throws -> [Float] {
        let music = try AudioFileReader.monoSamples(path: heldMusicPath, sampleRate: sampleRate, quality: 5)
        return Array(music[..<min(music.count, Int(seconds * Double(sampleRate)))])
    }

    /// Far-end speech at 16 kHz, repeated to `seconds`, at about -20 dBFS RMS.
    static func farSpeech(seconds: Double, sampleRate: Int = 16000) throws -> [Float] {
        let speech = try fixture("far-speech-16k.wav", sampleRate: sampleRate)
        var result: [Float] = []
        while Double(result.count) < seconds * Double(sampleRate) { result += speech }
        return Array(result[..<Int(seconds * Double(sampleRate))])
    }
}
