import ArgumentParser
import Foundation
import VoiceIO

/// `voicepeer simulate`: the unit against the simulated room, with far-end voice, a near talker and app sounds.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the voice unit in a simulated room and write the processed microphone.")

    @Option(name: .long, help: "Far-end voice (played through the loudspeaker).")
    var far: String
    @Option(name: .long, help: "Near-end talker (heard by the microphone).")
    var near: String?
    @Option(name: .customLong("near-start"), help: "When the near talker starts, in seconds.")
    var nearStart = 0.0
    @Option(name: .long, help: "App sound mixed into the loudspeaker (any rate).")
    var app: String?
    @Option(name: .long, help: "Processed voice to write (WAV at the voice rate).")
    var out: String
    @Option(name: .customLong("voice-rate"), help: "Voice rate in Hz.")
    var voiceRate = 16000
    @Option(name: .customLong("device-rate"), help: "Simulated device rate in Hz.")
    var deviceRate = 48000
    @Flag(name: .long, help: "Bypass voice processing.")
    var bypass = false
    @Flag(name: .customLong("no-agc"), help: "Turn automatic gain control off.")
    var noAGC = false
    @Option(name: .customLong("duck-db"), help: "Duck the app sound by this many dB while someone talks.")
    var duckDB: Float?
    @Option(name: .customLong("delay-ms"), help: "Bulk echo delay in milliseconds.")
    var delayMilliseconds = 60.0
    @Option(name: .long, help: "Room reverberation time in seconds.")
    var rt60 = 0.25
    @Option(name: .customLong("erl-db"), help: "Echo return loss in dB.")
    var erlDB = 6.0
    @Option(name: .customLong("drift-ppm"), help: "Capture/playback clock drift in ppm.")
    var driftPPM = 0.0
    @Option(name: .long, help: "Length of the run in seconds (default: the longest input plus one second).")
    var seconds: Double?
    @Option(name: .customLong("record-dir"), help: "Write loudspeaker.wav and microphone.wav here for replay.")
    var recordDirectory: String?
    @Flag(name: .long, help: "Pace the room by the clock and print a live level line.")
    var realtime = false

    func run() throws {
        try CommandFailure.reporting {
            let voiceFormat = try StreamFormat.voice(sampleRate: voiceRate, sampleType: .int16)
            let farVoice = try AudioInput.load(far, sampleRate: voiceRate)
            var room = SimulatedRoomConfiguration()
            room.sampleRate = deviceRate
            room.clock = realtime ? .realTime : .virtual
            room.echoResponse = .synthetic(rt60Seconds: rt60)
            room.bulkDelayMilliseconds = delayMilliseconds
            room.echoReturnLossDB = erlDB
            room.driftPPM = driftPPM
            if let near { room.nearTalker = try AudioInput.load(near, sampleRate: deviceRate) }
            room.nearTalkerStartSeconds = nearStart
            let appReader = try app.map { path throws(AudioFileError) in try AudioFileReader(path: path) }
            let appSound = try appReader?.readAllMono() ?? []
            let appRate = appReader?.format.sampleRate ?? deviceRate
            let inputSeconds = [Double(farVoice.count) / Double(voiceRate),
                                nearStart + Double(room.nearTalker.count) / Double(deviceRate),
                                Double(appSound.count) / Double(appRate)].max() ?? 0
            let totalSeconds = seconds ?? inputSeconds + 1
            let totalPeriods = Int(totalSeconds * 100)
            let simulated = try SimulatedRoom(configuration: room)
            if recordDirectory != nil { simulated.startRecording(seconds: totalSeconds + 1) }

            let unit = try VoiceProcessingIO(device: simulated, voiceFormat: voiceFormat)
            unit.bypassVoiceProcessing = bypass
            unit.enableAGC = !noAGC
            if let duckDB {
                unit.duckOthers = true
                unit.duckingLevelDB = -abs(duckDB)
                unit.duckingMode = .voiceActivity
            }
            let source = VoiceSource(farVoice)
            unit.setRenderCallback { source.render($0) }
            let session = SimulationSession(unit: unit, appSound: appSound, appRate: appRate)
            try unit.start()
            if realtime {
                while simulated.periodCount < totalPeriods {
                    usleep(100_000)
                    try session.pump()
                    LiveLine.print(unit.statistics)
                }
                FileHandle.standardError.write(Data("\n".utf8))
            } else {
                var done = 0
                while done < totalPeriods {
                    try session.pump()
                    let chunk = min(10, totalPeriods - done)
                    try simulated.run(periods: chunk)
                    done += chunk
                }
            }
            unit.stop()
            try session.pump()
            let writer = try AudioFileWriter(path: out, format: try StreamFormat.voice(sampleRate: voiceRate))
            try session.output.withUnsafeBufferPointer { (frames) throws(AudioFileError) in try writer.write(frames) }
            writer.close()
            if let recordDirectory {
                let recording = simulated.recording()
                let format = try StreamFormat(sampleRate: deviceRate)
                for (name, samples) in [("loudspeaker", recording.loudspeaker), ("microphone", recording.microphone)] {
                    let file = try AudioFileWriter(path: "\(recordDirectory)/\(name).wav", format: format)
                    try samples.withUnsafeBufferPointer { (frames) throws(AudioFileError) in try file.write(frames) }
                    file.close()
                }
            }
            Summary.print(unit.statistics, trueDelayMilliseconds: Double(simulated.echoDelayFrames) * 1000 / Double(deviceRate),
                          seconds: totalSeconds, bypass: bypass)
        }
    }
}

/// Feeds the app sound and drains processed voice between room periods (off the real-time thread).
final class SimulationSession {
    let unit: VoiceProcessingIO
    private let appSound: [Float]
    private let appRate: Int
    private var appPosition = 0
    private var drain = [Float](repeating: 0, count: 8192)
    private(set) var output: [Float] = []

    init(unit: VoiceProcessingIO, appSound: [Float], appRate: Int) {
        self.unit = unit
        self.appSound = appSound
        self.appRate = appRate
    }

    func pump() throws {
        if appPosition < appSound.count {
            appPosition += try appSound[appPosition...].withUnsafeBufferPointer {
                try unit.enqueueOtherAudio($0, sampleRate: appRate)
            }
        }
        while true {
            let count = drain.withUnsafeMutableBufferPointer { unit.readInput(into: .float32($0)) }
            guard count > 0 else { break }
            output.append(contentsOf: drain[..<count])
        }
    }
}

/// The far-end voice for the render callback: Int16 client format, then silence. Real-time safe.
final class VoiceSource: @unchecked Sendable {
    private let samples: [Int16]
    private var position = 0

    init(_ voice: [Float]) { samples = voice.map { Int16((min(max($0, -1), 1) * 32767).rounded()) } }

    func render(_ frames: VoiceFrames) {
        guard case .int16(let buffer) = frames else { return }
        samples.withUnsafeBufferPointer { source in
            for index in buffer.indices {
                buffer[index] = position < source.count ? source[position] : 0
                position += 1
            }
        }
    }
}

enum AudioInput {
    /// A file's audio, mono, converted to `sampleRate`.
    static func load(_ path: String, sampleRate: Int) throws -> [Float] {
        let reader = try AudioFileReader(path: path)
        let samples = try reader.readAllMono()
        guard reader.format.sampleRate != sampleRate else { return samples }
        let resampler = try Resampler(inputRate: reader.format.sampleRate, outputRate: sampleRate, quality: 8)
        var output = [Float](repeating: 0, count: resampler.maximumOutputFrames(inputFrames: samples.count))
        let produced = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { resampler.process(input: input, output: $0).outputFrames }
        }
        return Array(output[..<produced])
    }
}

enum LiveLine {
    static func print(_ stats: VoiceProcessingStatistics) {
        let line = String(format: "\rmic %6.1f  far %6.1f  app %6.1f  out %6.1f dBFS  ERLE %5.1f dB  delay %5.1f ms  agc %4.1f dB%@   ",
                          stats.microphone.rmsDBFS, stats.farEnd.rmsDBFS, stats.otherAudio.rmsDBFS,
                          stats.processed.rmsDBFS, stats.erleDB, stats.delayMilliseconds, stats.agcGainDB,
                          stats.isDucking ? "  ducking" : "")
        FileHandle.standardError.write(Data(line.utf8))
    }
}

enum Summary {
    static func print(_ stats: VoiceProcessingStatistics, trueDelayMilliseconds: Double, seconds: Double, bypass: Bool) {
        Swift.print(String(format: "simulated %.1f s%@", seconds, bypass ? " (bypass)" : ""))
        Swift.print(String(format: "ERLE %.1f dB", stats.erleDB))
        Swift.print(String(format: "delay found %.1f ms (%@), echo delay in the room %.1f ms", stats.delayMilliseconds,
                           stats.isDelayEstimated ? "estimated" : "not estimated", trueDelayMilliseconds))
        Swift.print(String(format: "levels (last period, dBFS RMS): mic %.1f, processed %.1f, far %.1f, app %.1f",
                           stats.microphone.rmsDBFS, stats.processed.rmsDBFS, stats.farEnd.rmsDBFS,
                           stats.otherAudio.rmsDBFS))
        Swift.print(String(format: "AGC gain %.1f dB, ducking %@, periods %d, dropped input frames %d",
                           stats.agcGainDB, stats.isDucking ? "on" : "off", stats.periodCount,
                           stats.inputOverflowFrameCount))
    }
}
