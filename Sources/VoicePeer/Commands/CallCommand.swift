import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO
import VoiceIOSimulation

/// `voicepeer call`: a talk-back call over RTP/Opus between this peer's voice unit and a remote peer, held by a
/// `CallEndpoint` (the unit, the session, the recordings and the meters). This command parses the flags, opens
/// the device and runs the terminal: keys (`b` toggles bypass, `q` quits), SIGUSR1 (toggles bypass),
/// SIGINT/SIGTERM (stop), the status line and the final summary, and writes the `--report`. The summary gives,
/// for the microphone and loudspeaker recordings, the monotonic-clock time of their first frame, so that
/// `voicepeer compare` can put two peers' recordings on one time base (mouth-to-ear latency).
struct CallCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "call",
        abstract: "Talk-back call over RTP/Opus with the voice unit (b or SIGUSR1 toggles bypass, m or SIGUSR2 mute).")

    @Option(help: "Local HOST:PORT to receive on (and send from); or from --local-sdp.")
    var listen: String?
    @Option(help: "Remote peer's HOST:PORT: the only source accepted and where our stream goes; or from --remote-sdp.")
    var remote: String?
    @OptionGroup var sessionDescriptions: SessionDescriptionOptions
    @OptionGroup var audioDevice: DeviceOptions
    @OptionGroup var logging: LogOptions
    @Option(help: "Near-end talker for the simulated room (an audio file, repeated with a second's pause for the whole call; not with alsa:).")
    var talker: String?
    @Option(name: .customLong("talker-delay"), help: "Seconds of silence before the talker starts (simulated room).")
    var talkerDelay = 0.0
    @Option(name: .customLong("talk-turn"), help: "Talk in turns (simulated room): TALK seconds of the talker, then PAUSE seconds of silence, as TALK:PAUSE.")
    var talkTurn: String?
    @OptionGroup var stream: StreamOptions
    @Flag(help: "Start with voice processing bypassed.")
    var bypass = false
    @Option(name: .customLong("block-ms"),
            help: "Voice processing block in ms, 5 or 10 (default: 5 with --frame-ms 20 or less, else 10): 5 halves the processing delay (10 ms instead of 20) for about twice the echo canceller's CPU.")
    var blockMilliseconds: Int?
    @Option(help: "Record the processed microphone as sent (WAV, voice rate); toggles go to FILE.events.")
    var record: String?
    @Option(name: .customLong("record-mic"), help: "Record the raw microphone (WAV, device rate).")
    var recordMic: String?
    @Option(name: .customLong("record-far"), help: "Record the received far-end voice (WAV, voice rate).")
    var recordFar: String?
    @Option(name: .customLong("record-speaker"), help: "Record what the loudspeaker plays (WAV, device rate).")
    var recordSpeaker: String?
    @Option(help: "Write an SDP describing the stream this peer sends.")
    var sdp: String?
    @Option(help: "Stop after this many seconds (default: until Ctrl-C or SIGTERM).")
    var duration: Double?
    @Option(help: "Write the call's report (statistics, ERLE, latency, E-model R and MOS) as JSON to this file at its end.")
    var report: String?
    @Option(name: .customLong("report-interval"), help: "Also rewrite the --report every this many seconds during the call (stopReason null until it ends).")
    var reportInterval: Double?
    @OptionGroup var appSounds: AppSoundOptions
    @Flag(help: "Play a ringtone until the far end first talks.")
    var ringtone = false

    func validate() throws {
        if remote?.hasSuffix(":0") == true { throw ValidationError("--remote needs a port other than 0") }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
        if let blockMilliseconds, !VoiceProcessingSettings.processingBlockDurations.contains(blockMilliseconds) {
            throw ValidationError("--block-ms must be 5 or 10")
        }
        if let reportInterval {
            guard report != nil else { throw ValidationError("--report-interval needs --report") }
            try FlagRange(flag: "--report-interval", range: 0.1...86_400).check(reportInterval)
        }
        if (talker != nil || talkTurn != nil || talkerDelay != 0) && audioDevice.isSystemDevice {
            throw ValidationError("--talker, --talk-turn and --talker-delay shape the simulated room's near-end voice; with \(audioDevice.device) the microphone talks")
        }
        guard talkerDelay >= 0 else { throw ValidationError("--talker-delay must not be negative") }
        if talkTurn != nil && turn == nil { throw ValidationError("--talk-turn takes TALK:PAUSE, two positive numbers of seconds") }
    }

    func run() throws {
        var deviceFailure: String?
        try CommandFailure.reporting {
            var (listenAddress, configuration, remotePreferences) = try sessionDescriptions.resolve(listen: listen, remote: remote)
            stream.apply(to: &configuration)
            SessionDescriptionOptions.apply(remotePreferences, to: &configuration)
            var settings = CallEndpoint.unitSettings(for: configuration)
            if let blockMilliseconds { settings.processingBlockMilliseconds = blockMilliseconds }
            let baseDevice = try openDevice(settings: settings)
            let endpoint = try CallEndpoint(
                device: baseDevice, listen: listenAddress, configuration: configuration,
                recordings: CallRecordingPaths(sent: record, microphone: recordMic, farEnd: recordFar,
                                               loudspeaker: recordSpeaker),
                settings: settings)
            let unit = endpoint.unit, session = endpoint.session
            if let sdp { try writeSDP(to: sdp, session: session) }
            if let report { try TextFile.write("", to: report) }  // a bad path fails before the call, not after
            unit.bypassVoiceProcessing = bypass
            let sounds = try AppSoundGraph(unit: unit, files: appSounds.plays, ringtone: ringtone)
            unit.isInputMuted = appSounds.mute

            try endpoint.start()
            try sounds?.start()
            let latency = endpoint.latency
            print("call: \(session.localAddress) ⇄ \(configuration.remote), \(endpoint.device.name) at \(unit.deviceConfiguration.sampleRate) Hz, voice \(stream.voiceRate) Hz, Opus \(configuration.codecRate) Hz \(configuration.frameDurationMilliseconds) ms \(stream.bitrate) bit/s\(configuration.inbandFEC ? " FEC" : "")\(configuration.dtx ? " DTX" : "") PT \(configuration.payloadType)/\(configuration.receivedPayloadType)\(configuration.srtp.map { ", \($0)" } ?? ""), lookahead \(String(cFormat: "%.1f", latency.encoderLookaheadMilliseconds)) ms, unit capture latency: conversion \(String(cFormat: "%.1f", latency.conversionMilliseconds)) ms, processing \(String(cFormat: "%.1f", latency.processingMilliseconds)) ms")
            fflush(nil)
            let monitor = CallMonitor(endpoint: endpoint, sounds: sounds)
            let reason = monitor.run(duration: duration, every: reportInterval.map { interval in
                (interval, { try? writeReport(endpoint.report()) })
            })
            sounds?.stop()
            endpoint.stop()
            if case .deviceFailed(let failure) = reason { deviceFailure = failure }
            var callReport = endpoint.report(stopReason: reason.description)
            if let room = baseDevice as? SimulatedRoom {
                callReport.roomSimulationMilliseconds = Double(room.simulationNanoseconds) / 1e6
            }
            monitor.printSummary(callReport)
            try writeReport(callReport)
        }
        // After the summary: the recordings are closed and complete; the exit says the call did not end normally.
        try CommandFailure.reporting { if let deviceFailure { throw CommandFailure("the call ended: \(deviceFailure)") } }
    }

    /// Writes `callReport` to `--report` whole: a reader never sees half of it (written beside it, then renamed).
    private func writeReport(_ callReport: CallReport) throws {
        guard let report else { return }
        try TextFile.write(try ReportJSON.encode(callReport), to: report + ".partial")
        guard rename(report + ".partial", report) == 0 else {
            throw CommandFailure("cannot write \(report): \(String(cString: strerror(errno)))")
        }
    }

    /// The selected device (an ALSA device is opened once here so that a missing or busy PCM fails with alsa-lib's
    /// reason before anything else).
    private func openDevice(settings: VoiceProcessingSettings) throws -> any AudioDevice {
        if let alsa = try audioDevice.openSystemDevice(sampleRate: settings.requestedDeviceRate,
                                                     periodMilliseconds: settings.periodMilliseconds) {
            return alsa.device
        }
        return try makeRoom(periodMilliseconds: settings.periodMilliseconds)
    }

    private func makeRoom(periodMilliseconds: Double) throws -> SimulatedRoom {
        var room = SimulatedRoomConfiguration()
        room.clock = .realTime
        room.periodMilliseconds = periodMilliseconds
        if let talker {
            // Held at the file's rate: the room converts it as it plays.
            let reader = try AudioFileReader(path: talker)
            let voice = try reader.readAllMono()
            guard !voice.isEmpty else { throw CommandFailure("\(talker): no audio") }
            let rate = reader.format.sampleRate
            room.nearTalker = voice
            room.nearTalkerSampleRate = rate
            room.nearTalkerRepetition = NearTalkerRepetition(
                gapFrames: rate, talkFrames: turn.map { Int($0.talkSeconds * Double(rate)) } ?? 0,
                pauseFrames: turn.map { Int($0.pauseSeconds * Double(rate)) } ?? 0)
            room.nearTalkerStartSeconds = talkerDelay
        }
        return try SimulatedRoom(configuration: room)
    }

    /// `--talk-turn TALK:PAUSE` in seconds, when given and valid.
    private var turn: (talkSeconds: Double, pauseSeconds: Double)? {
        guard let parts = talkTurn?.split(separator: ":"), parts.count == 2,
              let talk = Double(parts[0]), let pause = Double(parts[1]), talk > 0, pause > 0 else { return nil }
        return (talk, pause)
    }

    private func writeSDP(to path: String, session: CallSession) throws {
        // For tools that receive what we send: our destination, and with SRTP the key we send with (0600).
        let description = SessionDescription(
            destination: session.configuration.remote, origin: session.localAddress,
            payloadType: session.configuration.payloadType,
            format: try OpusFormat(sampleRate: session.configuration.codecRate,
                                   frameDurationMilliseconds: session.configuration.frameDurationMilliseconds),
            bitsPerSecond: stream.bitrate, inbandFEC: session.configuration.inbandFEC, dtx: session.configuration.dtx,
            sessionID: UInt64(time(nil)),
            crypto: session.configuration.srtp.map { [SDPCrypto(tag: 1, key: $0.sending)] } ?? [],
            ssrc: session.statistics.localSSRC)
        try TextFile.write(description.text, to: path, ownerOnly: session.configuration.srtp != nil)
    }
}
