import ArgumentParser
import Foundation
import VoiceIO

/// `voicepeer simulate`: the unit against the simulated room (or a real ALSA device), with far-end voice, a
/// near talker and app sounds.
struct SimulateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulate",
        abstract: "Run the voice unit in a simulated room, or on an ALSA device, and write the processed microphone.",
        discussion: """
            With --device alsa:NAME the far-end voice plays on the device and its capture is processed in real \
            time; --near, --delay-ms, --rt60, --erl-db, --drift-ppm, --loudspeaker-drive and --record-dir describe \
            the simulated room and do not apply.
            """)

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
    @Option(name: .customLong("device-rate"), help: "Device rate in Hz (an ALSA device may give another).")
    var deviceRate = 48000
    @OptionGroup var audioDevice: DeviceOptions
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
    @Option(name: .customLong("loudspeaker-drive"),
            help: "Soft-clip the loudspeaker: tanh with this drive (small signals keep unit gain; default linear).")
    var loudspeakerDrive: Float?
    @Option(name: .long, help: "Length of the run in seconds (default: the longest input plus one second).")
    var seconds: Double?
    @Option(name: .customLong("record-dir"), help: "Write loudspeaker.wav and microphone.wav here for replay.")
    var recordDirectory: String?
    @Flag(name: .long, help: "Pace the room by the clock and print a live level line (always so on ALSA).")
    var realtime = false

    /// The longest run (and latest near-talker start) accepted, in seconds: a day.
    static let longestRunSeconds = 86_400.0

    func validate() throws {
        try FlagRange(flag: "--loudspeaker-drive", range: 0...100, isLowerBoundExcluded: true).check(loudspeakerDrive)
        try FlagRange(flag: "--seconds", range: 0...Self.longestRunSeconds, isLowerBoundExcluded: true).check(seconds)
        try FlagRange(flag: "--near-start", range: 0...Self.longestRunSeconds).check(nearStart)
        try FlagRange(flag: "--erl-db", range: -40...100).check(erlDB)
        try FlagRange(flag: "--duck-db", range: -100...100).check(duckDB)
        guard audioDevice.isSystemDevice else { return }
        guard near == nil, recordDirectory == nil, loudspeakerDrive == nil else {
            throw ValidationError("--near, --record-dir and --loudspeaker-drive need the simulated room (--device sim)")
        }
    }

    func run() throws {
        try CommandFailure.reporting {
            let voiceFormat = try StreamFormat.voice(sampleRate: voiceRate, sampleType: .int16)
            let farVoice = try AudioFileReader.monoSamples(path: far, sampleRate: voiceRate)
            let device: any AudioDevice
            if let alsa = try audioDevice.openSystemDevice(sampleRate: deviceRate) {
                device = alsa.device
            } else {
                device = try makeRoom()
            }
            let room = device as? SimulatedRoom
            let appReader = try app.map { path throws(AudioFileError) in try AudioFileReader(path: path) }
            let appSound = try appReader?.readAllMono() ?? []
            let appRate = appReader?.format.sampleRate ?? deviceRate
            let nearFrames = room?.configuration.nearTalker.count ?? 0
            let inputSeconds = [Double(farVoice.count) / Double(voiceRate),
                                nearStart + Double(nearFrames) / Double(deviceRate),
                                Double(appSound.count) / Double(appRate)].max() ?? 0
            let totalSeconds = seconds ?? inputSeconds + 1
            if recordDirectory != nil { room?.startRecording(seconds: totalSeconds + 1) }

            var settings = VoiceProcessingSettings()
            settings.requestedDeviceRate = deviceRate
            let unit = try VoiceProcessingIO(device: device, voiceFormat: voiceFormat, settings: settings)
            unit.bypassVoiceProcessing = bypass
            unit.enableAGC = !noAGC
            if let duckDB {
                unit.duckOthers = true
                unit.duckingLevelDB = -abs(duckDB)
                unit.duckingMode = .voiceActivity
            }
            let source = VoiceSource(farVoice)
            unit.setRenderCallback { source.render($0) }
            let writer = try AudioFileWriter(path: out, format: try StreamFormat.voice(sampleRate: voiceRate))
            let session = SimulationSession(unit: unit, appSound: appSound, appRate: appRate, writer: writer)
            let totalPeriods = Int((totalSeconds * 1000 / unit.deviceConfiguration.periodMilliseconds).rounded(.up))
            try unit.start()
            if let room, !realtime {
                var done = 0
                while done < totalPeriods {
                    try session.pump()
                    let chunk = min(10, totalPeriods - done)
                    try room.run(periods: chunk)
                    done += chunk
                }
            } else {
                try session.runPaced(periods: totalPeriods, seconds: totalSeconds)
            }
            unit.stop()
            try session.pump()
            writer.close()
            if let recordDirectory, let room { try write(room.recording(), to: recordDirectory) }
            let echoDelay = room.map {
                String(format: "echo delay in the room %.1f ms", Double($0.echoDelayFrames) * 1000 / Double(deviceRate))
            } ?? Summary.reportedDelay(device.timing, sampleRate: unit.deviceConfiguration.sampleRate)
            Summary.print(unit.statistics, levels: session.farTalkLevels, device: device, configuration: unit.deviceConfiguration,
                          echoDelay: echoDelay, seconds: totalSeconds, bypass: bypass)
        }
    }

    private func makeRoom() throws -> SimulatedRoom {
        var room = SimulatedRoomConfiguration()
        room.sampleRate = deviceRate
        room.clock = realtime ? .realTime : .virtual
        room.echoResponse = .synthetic(rt60Seconds: rt60)
        room.bulkDelayMilliseconds = delayMilliseconds
        room.echoReturnLossDB = erlDB
        room.driftPPM = driftPPM
        room.loudspeakerDrive = loudspeakerDrive
        if let near { room.nearTalker = try AudioFileReader.monoSamples(path: near, sampleRate: deviceRate) }
        room.nearTalkerStartSeconds = nearStart
        return try SimulatedRoom(configuration: room)
    }

    private func write(_ recording: (loudspeaker: [Float], microphone: [Float]), to directory: String) throws {
        let format = try StreamFormat(sampleRate: deviceRate)
        for (name, samples) in [("loudspeaker", recording.loudspeaker), ("microphone", recording.microphone)] {
            let file = try AudioFileWriter(path: "\(directory)/\(name).wav", format: format)
            try samples.withUnsafeBufferPointer { (frames) throws(AudioFileError) in try file.write(frames) }
            file.close()
        }
    }
}

/// Feeds the app sound and drains processed voice into the output file between device periods (off the
/// real-time thread), and keeps the unit's levels while the far end talks. The file is written as the run goes
/// (its header valid after every write), so a run that is killed or whose device fails leaves what it processed.
final class SimulationSession {
    let unit: VoiceProcessingIO
    private let appSound: [Float]
    private let appRate: Int
    private let writer: AudioFileWriter
    private var appPosition = 0
    private var drain = [Float](repeating: 0, count: 8192)
    private(set) var farTalkLevels = FarTalkLevels()

    init(unit: VoiceProcessingIO, appSound: [Float], appRate: Int, writer: AudioFileWriter) {
        self.unit = unit
        self.appSound = appSound
        self.appRate = appRate
        self.writer = writer
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
            try drain[..<count].withUnsafeBufferPointer { (frames) throws(AudioFileError) in try writer.write(frames) }
        }
        farTalkLevels.observe(unit.statistics)
    }

    /// Pumps every 100 ms with a live level line until the device ran `periods` periods; fails when the device
    /// reports a failure (what was processed until then is in the file), or when it has not run them after
    /// `seconds` plus five seconds of wall-clock time (a device that stopped delivering audio).
    func runPaced(periods: Int, seconds: Double) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int((seconds + 5) * 1000))
        while unit.statistics.periodCount < periods {
            if let failure = unit.device.failure {
                unit.stop()
                try pump()
                writer.close()
                FileHandle.standardError.write(Data("\n".utf8))
                let savedSeconds = Double(writer.framesWritten) / Double(writer.format.sampleRate)
                throw CommandFailure("\(failure) (the device failed after \(unit.statistics.periodCount) of \(periods) periods; \(writer.path) holds the \(String(format: "%.2f", savedSeconds)) s processed until then)")
            }
            guard ContinuousClock.now < deadline else {
                unit.stop()
                throw CommandFailure("\(unit.device.name) ran \(unit.statistics.periodCount) of \(periods) periods in \(Int(seconds + 5)) s: it stopped delivering audio")
            }
            usleep(100_000)
            try pump()
            LiveLine.print(unit.statistics)
        }
        FileHandle.standardError.write(Data("\n".utf8))
    }
}

/// Mean levels (in power) and ERLE over the statistics snapshots taken while the far end was audible.
struct FarTalkLevels {
    static let farActiveDBFS: Float = -50
    private(set) var snapshotCount = 0
    private var microphonePower = 0.0
    private var processedPower = 0.0
    private var farPower = 0.0
    private var erleDBSum = 0.0

    mutating func observe(_ stats: VoiceProcessingStatistics) {
        guard stats.farEnd.rmsDBFS > Self.farActiveDBFS else { return }
        snapshotCount += 1
        microphonePower += Self.power(stats.microphone.rmsDBFS)
        processedPower += Self.power(stats.processed.rmsDBFS)
        farPower += Self.power(stats.farEnd.rmsDBFS)
        erleDBSum += Double(stats.erleDB)
    }

    var microphoneDBFS: Double { dB(microphonePower) }
    var processedDBFS: Double { dB(processedPower) }
    var farDBFS: Double { dB(farPower) }
    var meanERLEDB: Double { erleDBSum / Double(max(snapshotCount, 1)) }

    private static func power(_ dBFS: Float) -> Double { pow(10, Double(dBFS) / 10) }
    private func dB(_ sum: Double) -> Double { 10 * log10(max(sum / Double(max(snapshotCount, 1)), 1e-20)) }
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
    static func print(_ stats: VoiceProcessingStatistics, levels: FarTalkLevels, device: any AudioDevice,
                      configuration: DeviceConfiguration, echoDelay: String, seconds: Double, bypass: Bool) {
        let timing = device.timing
        Swift.print(String(format: "ran %.1f s on %@ (%@)%@", seconds, device.name, configuration.description,
                           bypass ? ", bypass" : ""))
        Swift.print(String(format: "ERLE %.1f dB (last), %.1f dB on average while the far end talked",
                           stats.erleDB, levels.meanERLEDB))
        let found = stats.isDelayEstimated
            ? String(format: "delay found %.1f ms (reference delayed by %.1f ms)", stats.measuredDelayMilliseconds,
                     stats.delayMilliseconds)
            : String(format: "delay not found yet (reference delayed by %.1f ms)", stats.delayMilliseconds)
        Swift.print("\(found), \(echoDelay)")
        if levels.snapshotCount > 0 {
            Swift.print(String(format: "levels while the far end talked (dBFS RMS): mic %.1f, processed %.1f, far %.1f",
                               levels.microphoneDBFS, levels.processedDBFS, levels.farDBFS))
        }
        Swift.print(String(format: "levels (last period, dBFS RMS): mic %.1f, processed %.1f, far %.1f, app %.1f",
                           stats.microphone.rmsDBFS, stats.processed.rmsDBFS, stats.farEnd.rmsDBFS,
                           stats.otherAudio.rmsDBFS))
        Swift.print(String(format: "AGC gain %.1f dB, ducking %@, periods %d, dropped input frames %d",
                           stats.agcGainDB, stats.isDucking ? "on" : "off", stats.periodCount,
                           stats.inputOverflowFrameCount))
        Swift.print(String(format: "device: xruns %d, drift %.0f ppm, real-time I/O thread %@", stats.deviceXrunCount,
                           stats.driftPPM, timing.isRealTimeScheduled ? "yes (SCHED_FIFO)" : "no"))
    }

    /// The device's own playback plus capture delay, as a phrase for the delay line.
    static func reportedDelay(_ timing: DeviceTiming, sampleRate: Int) -> String {
        let frames = timing.playbackDelayFrames + timing.captureDelayFrames
        return String(format: "device reports %.1f ms (playback %d + capture %d frames)",
                      Double(frames) * 1000 / Double(sampleRate), timing.playbackDelayFrames, timing.captureDelayFrames)
    }
}
