import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import VoiceIO
import VoiceIOSimulation

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

    @Option(name: .long, help: "Far-end voice (played through the loudspeaker), or 'silence'.")
    var far: String
    @Option(name: .long, help: "Near-end talker (heard by the microphone).")
    var near: String?
    @Option(name: .customLong("near-start"), help: "When the near talker starts, in seconds.")
    var nearStart = 0.0
    @Option(name: .long, help: "App sound mixed into the loudspeaker (any rate).")
    var app: String?
    @OptionGroup var appSounds: AppSoundOptions
    @Option(name: .long, help: "Processed voice to write (WAV at the voice rate).")
    var out: String
    @Option(name: .customLong("voice-rate"), help: "Voice rate in Hz.")
    var voiceRate = 16000
    @Option(name: .customLong("device-rate"), help: "Device rate in Hz (an ALSA device may give another).")
    var deviceRate = 48000
    @OptionGroup var audioDevice: DeviceOptions
    @OptionGroup var logging: LogOptions
    @Flag(name: .long, help: "Bypass voice processing.")
    var bypass = false
    @Flag(name: .customLong("no-agc"), help: "Turn automatic gain control off.")
    var noAGC = false
    @OptionGroup var block: ProcessingBlockOptions
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
    @Option(help: "Write the run's report (the unit's statistics, ERLE, the echo delay found and the room's) as JSON to this file.")
    var report: String?

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
            let farVoice = far == "silence" ? [] : try AudioFileReader.monoSamples(path: far, sampleRate: voiceRate)
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
            // Played files loop: they alone make a 10 s run unless --seconds says otherwise.
            let totalSeconds = seconds ?? max(inputSeconds + 1, appSounds.plays.isEmpty ? 0 : 10)
            if recordDirectory != nil { room?.startRecording(seconds: totalSeconds + 1) }

            var settings = VoiceProcessingSettings()
            settings.requestedDeviceRate = deviceRate
            settings.processingBlockMilliseconds = block.blockMilliseconds
            let unit = try VoiceProcessingIO(device: device, voiceFormat: voiceFormat, settings: settings)
            unit.bypassVoiceProcessing = bypass
            unit.enableAGC = !noAGC
            if let duckDB {
                unit.duckOthers = true
                unit.duckingLevelDB = -abs(duckDB)
                unit.duckingMode = .voiceActivity
            }
            if let report { try TextFile.write("", to: report) }  // a bad path fails before the run, not after
            let writer = try AudioFileWriter(path: out, format: try StreamFormat.voice(sampleRate: voiceRate))
            let session = SimulationSession(unit: unit, farVoice: farVoice, appSound: appSound, appRate: appRate,
                                            writer: writer)
            let sounds = try AppSoundGraph(unit: unit, files: appSounds.plays, ringtone: false)
            unit.isInputMuted = appSounds.mute
            let mutedSpeech = MutedSpeechLog(unit: unit)
            session.beforeVirtualPeriods = { sounds?.waitForPlayers() }
            try sounds?.start()
            defer { sounds?.stop() }
            let totalPeriods = Int((totalSeconds * 1000 / unit.deviceConfiguration.periodMilliseconds).rounded(.up))
            let isPaced = room == nil || realtime
            do {
                try session.run(periods: totalPeriods, seconds: totalSeconds) { LiveLine.print($0) }
                if isPaced { StandardError.write("\n") }
            } catch {
                if isPaced { StandardError.write("\n") }
                throw error
            }
            if let recordDirectory, let room { try write(room.recording(), to: recordDirectory) }
            let runReport = SimulationReport(session: session, seconds: totalSeconds)
            let echoDelay = runReport.roomEchoDelayMilliseconds.map { String(cFormat: "echo delay in the room %.1f ms", $0) }
                ?? Summary.reportedDelay(device.timing, sampleRate: unit.deviceConfiguration.sampleRate)
            Summary.print(unit.statistics, levels: session.farTalkLevels, device: device, configuration: unit.deviceConfiguration,
                          echoDelay: echoDelay, seconds: totalSeconds, bypass: bypass)
            if let sounds { print("app sound buses:\n" + sounds.summaryLines.joined(separator: "\n")) }
            unit.waitForMutedSpeechEvents()
            for event in mutedSpeech.take() { print(MutedSpeechLog.text(event)) }
            if let report { try TextFile.write(try ReportJSON.encode(runReport), to: report) }
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

enum LiveLine {
    static func print(_ stats: VoiceProcessingStatistics) {
        let line = String(cFormat: "\rmic %6.1f  far %6.1f  app %6.1f  out %6.1f dBFS  ERLE %5.1f dB  delay %5.1f ms  agc %4.1f dB%@%@%@   ",
                          stats.microphone.rmsDBFS, stats.farEnd.rmsDBFS, stats.otherAudio.rmsDBFS,
                          stats.processed.rmsDBFS, stats.erleDB, stats.delayMilliseconds, stats.agcGainDB,
                          stats.isDucking ? "  ducking" : "", stats.isMicrophoneClipping ? "  MIC CLIPPING" : "",
                          stats.isNoEchoFound ? "  no echo found" : "")
        StandardError.write(line)
    }
}

enum Summary {
    static func print(_ stats: VoiceProcessingStatistics, levels: FarTalkLevels, device: any AudioDevice,
                      configuration: DeviceConfiguration, echoDelay: String, seconds: Double, bypass: Bool) {
        let timing = device.timing
        Swift.print(String(cFormat: "ran %.1f s on %@ (%@)%@", seconds, device.name, configuration.description,
                           bypass ? ", bypass" : ""))
        let span = stats.erle.span(bypassed: bypass)
        Swift.print(String(cFormat: "ERLE %.1f dB (last), %.1f dB over the %.1f s the far end played without double talk",
                           stats.erleDB, span.decibels ?? 0, span.seconds))
        let found = stats.isDelayEstimated
            ? String(cFormat: "delay found %.1f ms (reference delayed by %.1f ms)", stats.measuredDelayMilliseconds,
                     stats.delayMilliseconds)
            : String(cFormat: "delay not found yet (reference delayed by %.1f ms)", stats.delayMilliseconds)
        Swift.print("\(found), \(echoDelay)")
        if levels.snapshotCount > 0 {
            Swift.print(String(cFormat: "levels while the far end talked (dBFS RMS): mic %.1f, processed %.1f, far %.1f",
                               levels.microphoneDBFS, levels.processedDBFS, levels.farDBFS))
        }
        Swift.print(String(cFormat: "levels (last period, dBFS RMS): mic %.1f, processed %.1f, far %.1f, app %.1f",
                           stats.microphone.rmsDBFS, stats.processed.rmsDBFS, stats.farEnd.rmsDBFS,
                           stats.otherAudio.rmsDBFS))
        Swift.print(String(cFormat: "AGC gain %.1f dB, ducking %@, periods %d, dropped input frames %d",
                           stats.agcGainDB, stats.isDucking ? "on" : "off", stats.periodCount,
                           stats.inputOverflowFrameCount))
        Swift.print(String(cFormat: "device: xruns %d, drift %.0f ppm, real-time I/O thread %@", stats.deviceXrunCount,
                           stats.driftPPM, timing.isRealTimeScheduled ? "yes (SCHED_FIFO)" : "no"))
        Swift.print(String(cFormat: "echo filter: restarts %d (its old path taken back, moved: %d)",
                           stats.echoFilterRestartCount, stats.echoPathShiftCount))
        if let clipping = clippingWarning(stats, capturedFrames: stats.periodCount * configuration.periodFrames) {
            Swift.print(clipping)
        }
        if stats.isNoEchoFound { Swift.print(noEchoFoundNote) }
    }

    /// The line for a canceller that found no echo (`VoiceProcessingStatistics.isNoEchoFound`).
    static let noEchoFoundNote = "no echo found: the microphone hears none of the loudspeaker (a headset?),"
        + " or an echo the canceller cannot follow yet; ERLE comes from suppression alone"

    /// A line for a microphone that clipped (nil when it did not): how often, and what to do.
    static func clippingWarning(_ stats: VoiceProcessingStatistics, capturedFrames: Int?) -> String? {
        let clipped = stats.microphoneClippedFrameCount
        guard clipped > 0 else { return nil }
        let share = capturedFrames.map {
            String(cFormat: " (%.2f %% of the capture)", 100 * Double(clipped) / Double(max($0, 1)))
        }
        return String(cFormat: "microphone clipped in %d frames%@: lower its capture gain", clipped, share ?? "")
    }

    /// The device's own playback plus capture delay, as a phrase for the delay line.
    static func reportedDelay(_ timing: DeviceTiming, sampleRate: Int) -> String {
        let frames = timing.playbackDelayFrames + timing.captureDelayFrames
        return String(cFormat: "device reports %.1f ms (playback %d + capture %d frames)",
                      Double(frames) * 1000 / Double(sampleRate), timing.playbackDelayFrames, timing.captureDelayFrames)
    }
}
