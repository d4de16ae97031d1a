import ArgumentParser
import Foundation
import VoiceCall
import VoiceIO
import VoiceIOSimulation

/// `voicepeer call`: a talk-back call over RTP/Opus between this peer's voice unit and a remote peer.
///
/// ```
/// device ─► [raw mic tap ─► --record-mic] ─► VoiceProcessingIO ─► input callback ─► CallSession.sendCaptured ─► network
///    ▲                                             ▲               └─► --record
///    └─ [speaker tap ─► --record-speaker] ◄────────┴── render callback ◄─ CallSession.renderReceived ◄─ network
///                                                                      └─► --record-far
/// ```
/// The main thread only watches: keys (`b` toggles bypass, `q` quits), SIGUSR1 (toggles bypass), SIGINT/SIGTERM
/// (stop), the status line and the final summary. The summary gives, for the microphone and loudspeaker
/// recordings, the monotonic-clock time of their first frame, so that `voicepeer compare` can put two peers'
/// recordings on one time base (mouth-to-ear latency).
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
    @Option(help: "Near-end talker for the simulated room (an audio file, repeated with a second's pause for the whole call; not with alsa:).")
    var talker: String?
    @Option(name: .customLong("talker-delay"), help: "Seconds of silence before the talker starts (simulated room).")
    var talkerDelay = 0.0
    @Option(name: .customLong("talk-turn"), help: "Talk in turns (simulated room): TALK seconds of the talker, then PAUSE seconds of silence, as TALK:PAUSE.")
    var talkTurn: String?
    @Option(name: .customLong("voice-rate"), help: "Voice rate in Hz (8000, 11025, 12000, 16000, 24000, 48000).")
    var voiceRate = 16000
    @Option(help: "Opus bitrate in bit/s.")
    var bitrate = 24000
    @Option(name: .customLong("frame-ms"), help: "Opus frame duration in ms (10, 20, 40, 60).")
    var frameMilliseconds = 20
    @Flag(help: "Opus in-band forward error correction.")
    var fec = false
    @Flag(help: "Opus discontinuous transmission (send nothing during silence).")
    var dtx = false
    @Flag(help: "Start with voice processing bypassed.")
    var bypass = false
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
    @OptionGroup var appSounds: AppSoundOptions
    @Flag(help: "Play a ringtone until the far end first talks.")
    var ringtone = false

    func validate() throws {
        if remote?.hasSuffix(":0") == true { throw ValidationError("--remote needs a port other than 0") }
        guard StreamFormat.voiceRates.contains(voiceRate) else {
            throw ValidationError("--voice-rate \(voiceRate) is not one of \(StreamFormat.voiceRates.map(String.init).joined(separator: ", "))")
        }
        guard OpusFormat.frameDurationsMilliseconds.contains(frameMilliseconds) else {
            throw ValidationError("--frame-ms must be one of 10, 20, 40, 60")
        }
        guard OpusFormat.bitrateRange.contains(bitrate) else {
            throw ValidationError("--bitrate must be within \(OpusFormat.bitrateRange.lowerBound)–\(OpusFormat.bitrateRange.upperBound)")
        }
        if let duration, !(duration > 0) { throw ValidationError("--duration must be positive") }
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
            configuration.voiceRate = voiceRate
            configuration.frameDurationMilliseconds = frameMilliseconds
            configuration.bitsPerSecond = bitrate
            configuration.inbandFEC = fec
            configuration.dtx = dtx
            SessionDescriptionOptions.apply(remotePreferences, to: &configuration)
            let session = try CallSession(listen: listenAddress, configuration: configuration)
            if let sdp { try writeSDP(to: sdp, session: session) }

            let (baseDevice, deviceConfiguration) = try openDevice()
            let deviceRate = deviceConfiguration.sampleRate
            let micRecorder = try recordMic.map { path throws(AudioFileError) in try StreamRecorder(path: path, sampleRate: deviceRate) }
            let speakerRecorder = try recordSpeaker.map { path throws(AudioFileError) in try StreamRecorder(path: path, sampleRate: deviceRate) }
            let device: any AudioDevice = micRecorder == nil && speakerRecorder == nil ? baseDevice
                : TapDevice(baseDevice, capture: micRecorder.map { recorder in { recorder.append($0) } },
                            playback: speakerRecorder.map { recorder in { recorder.append($0) } })
            let unit = try VoiceProcessingIO(device: device, voiceFormat: try StreamFormat.voice(sampleRate: voiceRate))
            unit.bypassVoiceProcessing = bypass
            let sentRecorder = try record.map { path throws(AudioFileError) in try StreamRecorder(path: path, sampleRate: voiceRate) }
            let farRecorder = try recordFar.map { path throws(AudioFileError) in try StreamRecorder(path: path, sampleRate: voiceRate) }
            let room = baseDevice as? SimulatedRoom
            let echoMeter = room.map { _ in EchoReductionMeter() }
            let bridge = UnitBridge(unit: unit, session: session, sent: sentRecorder, far: farRecorder, room: room,
                                    echoMeter: echoMeter)
            bridge.connect()
            let sounds = try AppSoundGraph(unit: unit, files: appSounds.plays, ringtone: ringtone)
            unit.isInputMuted = appSounds.mute

            try session.start()
            try unit.start()
            try sounds?.start()
            print("call: \(session.localAddress) ⇄ \(configuration.remote), \(device.name) at \(unit.deviceConfiguration.sampleRate) Hz, voice \(voiceRate) Hz, Opus \(configuration.codecRate) Hz \(configuration.frameDurationMilliseconds) ms \(bitrate) bit/s\(configuration.inbandFEC ? " FEC" : "")\(configuration.dtx ? " DTX" : "") PT \(configuration.payloadType)/\(configuration.receivedPayloadType)\(configuration.srtp.map { ", \($0)" } ?? ""), lookahead \(String(format: "%.1f", Double(session.encoderLookaheadFrameCount) * 1000 / Double(configuration.codecRate))) ms, unit capture latency: conversion \(String(format: "%.1f", Double(unit.conversionLatencyFrames) * 1000 / Double(voiceRate))) ms, processing \(String(format: "%.1f", Double(unit.processingLatencyFrames) * 1000 / Double(voiceRate))) ms")
            fflush(nil)
            let monitor = CallMonitor(unit: unit, session: session, echoMeter: echoMeter,
                                      eventsPath: record.map { $0 + ".events" }, sounds: sounds)
            let reason = monitor.run(duration: duration)
            let timing = device.timing
            sounds?.stop()
            unit.stop()
            session.stop()
            if case .deviceFailed(let failure) = reason { deviceFailure = failure }
            let periodFrames = unit.deviceConfiguration.periodFrames
            let recordings = [
                CallRecording(role: "microphone", recorder: micRecorder,
                              deviceOffsetFrames: -(periodFrames + timing.captureDelayFrames)),
                CallRecording(role: "loudspeaker", recorder: speakerRecorder,
                              deviceOffsetFrames: timing.playbackDelayFrames - periodFrames),
                CallRecording(role: "sent", recorder: sentRecorder),
                CallRecording(role: "far end", recorder: farRecorder),
            ].compactMap { $0 }
            for recording in recordings { recording.recorder.close() }
            monitor.printSummary(reason: reason, recordings: recordings)
            let roomTime = room.map { String(format: ", room simulation %.1f ms", Double($0.simulationNanoseconds) / 1e6) } ?? ""
            print(String(format: "  audio thread time: call playout (jitter buffer, Opus decoding) %.1f ms%@",
                         Double(session.playoutNanoseconds) / 1e6, roomTime))
        }
        // After the summary: the recordings are closed and complete; the exit says the call did not end normally.
        try CommandFailure.reporting { if let deviceFailure { throw CommandFailure("the call ended: \(deviceFailure)") } }
    }

    /// The selected device, opened the way the unit will open it (to learn its rate before the recorders are
    /// made), with the configuration it gave.
    private func openDevice() throws -> (device: any AudioDevice, given: DeviceConfiguration) {
        let settings = VoiceProcessingSettings()
        if let alsa = try audioDevice.openSystemDevice(sampleRate: settings.requestedDeviceRate,
                                                     periodMilliseconds: settings.periodMilliseconds) {
            return (alsa.device, alsa.given)
        }
        let room = try makeRoom()
        return (room, try room.open(requested: .request(sampleRate: settings.requestedDeviceRate,
                                                        periodMilliseconds: settings.periodMilliseconds)))
    }

    private func makeRoom() throws -> SimulatedRoom {
        var room = SimulatedRoomConfiguration()
        room.clock = .realTime
        if let talker {
            let voice = try AudioFileReader.monoSamples(path: talker, sampleRate: room.sampleRate)
            guard !voice.isEmpty else { throw CommandFailure("\(talker): no audio") }
            room.nearTalker = voice
            room.nearTalkerRepetition = NearTalkerRepetition(
                gapFrames: room.sampleRate, talkFrames: turn.map { Int($0.talkSeconds * Double(room.sampleRate)) } ?? 0,
                pauseFrames: turn.map { Int($0.pauseSeconds * Double(room.sampleRate)) } ?? 0)
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
            bitsPerSecond: bitrate, inbandFEC: session.configuration.inbandFEC, dtx: session.configuration.dtx,
            sessionID: UInt64(Date().timeIntervalSince1970),
            crypto: session.configuration.srtp.map { [SDPCrypto(tag: 1, key: $0.sending)] } ?? [],
            ssrc: session.statistics.localSSRC)
        try TextFile.write(description.text, to: path, ownerOnly: session.configuration.srtp != nil)
    }
}

/// Joins the unit's callbacks to the call session, the recorders and, in a simulated room, the echo reduction
/// meter (fed the room's ground truth for each period); everything here runs on the real-time thread and is
/// real-time safe (the scratch buffer is allocated up front).
final class UnitBridge: @unchecked Sendable {
    private let unit: VoiceProcessingIO
    private let session: CallSession
    private let sent: StreamRecorder?
    private let far: StreamRecorder?
    private let room: SimulatedRoom?
    private let echoMeter: EchoReductionMeter?
    private let scratch: UnsafeMutableBufferPointer<Float>

    init(unit: VoiceProcessingIO, session: CallSession, sent: StreamRecorder?, far: StreamRecorder?,
         room: SimulatedRoom?, echoMeter: EchoReductionMeter?) {
        self.unit = unit
        self.session = session
        self.sent = sent
        self.far = far
        self.room = room
        self.echoMeter = echoMeter
        scratch = .allocate(capacity: 2048)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    func connect() {
        unit.setRenderCallback { [unowned self] frames in
            guard case .float32(let buffer) = frames else { return }
            session.renderReceived(into: buffer)
            far?.append(UnsafeBufferPointer(buffer))
        }
        unit.setInputCallback { [unowned self] _ in
            var sumOfSquares: Float = 0
            var frameCount = 0
            while true {
                let count = unit.readInput(into: .float32(scratch))
                guard count > 0 else { break }
                let frames = UnsafeBufferPointer(rebasing: scratch[..<count])
                session.sendCaptured(frames)
                sent?.append(frames)
                if echoMeter != nil { for sample in frames { sumOfSquares += sample * sample } }
                frameCount += count
            }
            // The room exchanges this period right now: its components are this period's.
            if let echoMeter, let room {
                echoMeter.add(room.periodComponents,
                              processedMeanSquare: frameCount > 0 ? sumOfSquares / Float(frameCount) : nil,
                              bypassed: unit.bypassVoiceProcessing)
            }
        }
    }
}
