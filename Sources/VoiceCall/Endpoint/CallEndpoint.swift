#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VoiceIO

/// A talk-back call in one object: the voice unit on an audio device, the call session (RTP/Opus), the
/// recordings and the meters, and the real-time glue between them (`CallAudioPath`).
///
/// ```
/// device ─► [raw mic tap ─► microphone recording] ─► VoiceProcessingIO ─► input ─► CallSession ─► network
///    ▲                                                     ▲                 └─► sent recording, ERLE meter
///    └─ [speaker tap ─► loudspeaker recording] ◄───────────┴── render ◄─ CallSession ◄─ network
///                                                                 └─► far-end recording
/// ```
///
/// ```swift
/// let endpoint = try CallEndpoint(device: ALSADevice(name: "default"),
///                                 listen: try .resolve("0.0.0.0:5004"),
///                                 configuration: CallConfiguration(remote: try .resolve("192.0.2.7:5004")))
/// try endpoint.start()
/// endpoint.toggleBypass(source: "button")
/// print(endpoint.statistics.call.packetsReceived)
/// endpoint.stop()
/// ```
///
/// Life cycle: `init` (opens the device, binds, creates the recordings) → `start` → `stop` (closes the
/// recordings; final). Every member is for ordinary threads, not the real-time thread; the audio path the
/// endpoint installs allocates nothing and takes no lock (tests count).
public final class CallEndpoint: @unchecked Sendable {
    public let unit: VoiceProcessingIO
    public let session: CallSession
    /// The device the unit runs on (the given one, wrapped in a `TapDevice` when the microphone or the
    /// loudspeaker is recorded).
    public let device: any AudioDevice
    public let recordingPaths: CallRecordingPaths
    private let audioPath: CallAudioPath
    private let microphoneRecorder: StreamRecorder?
    private let loudspeakerRecorder: StreamRecorder?
    private let sentRecorder: StreamRecorder?
    private let farRecorder: StreamRecorder?
    private let lock = Mutex(())
    private var startDate: Date?
    private var stopDate: Date?
    private var toggles = 0

    /// The unit's settings for a call (and the period to open the device with): 5 ms processing blocks when Opus frames are
    /// `shortBlockMaximumFrameMilliseconds` or shorter, 10 ms blocks for longer frames, where the delay matters
    /// less. 5 ms blocks halve the processing delay (10 ms instead of 20, the largest term of mouth-to-ear after
    /// the frame) for about 40 % more CPU in the unit (sim call, 20 ms frames, `scripts/bench-call --block-ms 5|10`:
    /// the unit and device glue 5.20 % against 3.72 % of a core, mouth-to-ear 56.4 against 68.1 ms per turn).
    public static func unitSettings(for configuration: CallConfiguration) -> VoiceProcessingSettings {
        var settings = VoiceProcessingSettings()
        settings.processingBlockMilliseconds =
            configuration.frameDurationMilliseconds <= shortBlockMaximumFrameMilliseconds ? 5 : 10
        // 10 ms frames also get 5 ms device periods: the jitter buffer is pulled and the processed voice delivered
        // twice as often (mouth-to-ear 38-43 ms per turn against 46-48 at 10 ms periods, sim, realtime; 8.8 %
        // of a core for the peer against 7.6 %).
        if configuration.frameDurationMilliseconds <= shortPeriodMaximumFrameMilliseconds { settings.periodMilliseconds = 5 }
        return settings
    }

    /// The longest Opus frame that gets 5 ms processing blocks, in milliseconds.
    public static let shortBlockMaximumFrameMilliseconds = 20
    /// The longest Opus frame that gets 5 ms device periods, in milliseconds.
    public static let shortPeriodMaximumFrameMilliseconds = 10

    /// Opens `device` (for its rate), binds `listen`, creates the recordings (their files exist from here on)
    /// and builds the unit on the device. Not real-time safe.
    /// `settings`: the unit's; nil takes `unitSettings(for: configuration)`.
    public init(device baseDevice: any AudioDevice, listen: SocketAddress, configuration: CallConfiguration,
                recordings: CallRecordingPaths = .init(), settings: VoiceProcessingSettings? = nil) throws {
        let settings = settings ?? Self.unitSettings(for: configuration)
        session = try CallSession(listen: listen, configuration: configuration)
        let given = try baseDevice.open(requested: .request(sampleRate: settings.requestedDeviceRate,
                                                            periodMilliseconds: settings.periodMilliseconds))
        func recorder(_ path: String?, _ sampleRate: Int, timeline: Bool = false) throws(AudioFileError) -> StreamRecorder? {
            try path.map { path throws(AudioFileError) in
                try StreamRecorder(path: path, sampleRate: sampleRate, timelinePath: timeline ? path + ".timeline" : nil)
            }
        }
        // The device-side recordings keep a timeline: where each period sits on the clock.
        microphoneRecorder = try recorder(recordings.microphone, given.sampleRate, timeline: true)
        loudspeakerRecorder = try recorder(recordings.loudspeaker, given.sampleRate, timeline: true)
        device = microphoneRecorder == nil && loudspeakerRecorder == nil ? baseDevice
            : TapDevice(baseDevice, capture: microphoneRecorder.map { recorder in { recorder.append($0) } },
                        playback: loudspeakerRecorder.map { recorder in { recorder.append($0) } })
        unit = try VoiceProcessingIO(device: device, voiceFormat: try StreamFormat.voice(sampleRate: configuration.voiceRate),
                                     settings: settings)
        sentRecorder = try recorder(recordings.sent, configuration.voiceRate)
        farRecorder = try recorder(recordings.farEnd, configuration.voiceRate)
        recordingPaths = recordings
        if let events = recordings.events { _ = FileManager.default.createFile(atPath: events, contents: nil) }
        audioPath = CallAudioPath(unit: unit, session: session, sent: sentRecorder, far: farRecorder,
                                  groundTruth: baseDevice as? any EchoGroundTruthSource)
        audioPath.connect()
    }

    /// Starts the network thread, then the device. Not real-time safe.
    public func start() throws {
        try session.start()
        try unit.start()
        lock.withLock { _ in startDate = Date() }
    }

    /// Stops the device and the network thread and closes the recordings (complete and playable). Not
    /// real-time safe; idempotent.
    public func stop() {
        unit.stop()
        session.stop()
        for recorder in [microphoneRecorder, loudspeakerRecorder, sentRecorder, farRecorder] { recorder?.close() }
        lock.withLock { _ in if stopDate == nil, startDate != nil { stopDate = Date() } }
    }

    /// Seconds since `start` (until `stop`).
    public var elapsedSeconds: Double {
        lock.withLock { _ in
            guard let startDate else { return 0 }
            return (stopDate ?? Date()).timeIntervalSince(startDate)
        }
    }

    /// Voice processing bypassed (format conversion only), for A/B comparison.
    public var bypass: Bool { unit.bypassVoiceProcessing }

    /// Sets bypass and, when it changes, notes it in the events file beside the sent recording
    /// ("seconds<TAB>bypass on|off<TAB>source"). Returns the seconds since start at which it happened.
    @discardableResult
    public func setBypass(_ bypassed: Bool, source: String) -> Double {
        let seconds = elapsedSeconds
        guard unit.bypassVoiceProcessing != bypassed else { return seconds }
        unit.bypassVoiceProcessing = bypassed
        lock.withLock { _ in toggles += 1 }
        noteEvent("bypass \(bypassed ? "on" : "off")\t\(source)", atSeconds: seconds)
        return seconds
    }

    /// Appends "seconds<TAB>event" to the events file beside the sent recording (if it is recorded).
    public func noteEvent(_ event: String, atSeconds seconds: Double) {
        guard let events = recordingPaths.events else { return }
        let descriptor = open(events, O_WRONLY | O_APPEND | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        _ = Array(String(cFormat: "%.3f\t%@\n", seconds, event).utf8).withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }

    @discardableResult
    public func toggleBypass(source: String) -> Double { setBypass(!bypass, source: source) }

    /// Times bypass changed.
    public var bypassToggleCount: Int { lock.withLock { _ in toggles } }

    /// Sends silence instead of the microphone (the unit's `isInputMuted`: it still listens for muted speech).
    public var isMicrophoneMuted: Bool {
        get { unit.isInputMuted }
        set { unit.isInputMuted = newValue }
    }

    /// Silences the loudspeaker (the unit's `muteOutput`).
    public var isSpeakerMuted: Bool {
        get { unit.muteOutput }
        set { unit.muteOutput = newValue }
    }

    /// The unit's and the session's figures now, and the ground-truth ERLE when the device knows its echo.
    public var statistics: CallEndpointStatistics {
        CallEndpointStatistics(unit: unit.statistics, call: session.statistics, echoGroundTruth: audioPath.echoMeter?.report)
    }

    /// Mouth-to-ear delay as far as this endpoint can tell, in milliseconds: half the RTCP round trip (network
    /// and the remote's receive path are assumed symmetric with ours), the jitter buffer, the codec frame and
    /// lookahead, the unit's conversion and processing, and the device's playback and capture buffering as it
    /// reports them (the capture period is inside the codec frame; a simulated room reports none).
    public var latency: CallLatency {
        let configuration = session.configuration
        let voiceMilliseconds = 1000 / Double(configuration.voiceRate)
        let deviceMilliseconds = 1000 / Double(unit.deviceConfiguration.sampleRate)
        let timing = device.timing
        let call = session.statistics
        return CallLatency(
            networkOneWayMilliseconds: call.roundTripMilliseconds.map { $0 / 2 },
            jitterBufferMilliseconds: call.jitterBuffer.delayMilliseconds,
            frameMilliseconds: Double(configuration.frameDurationMilliseconds),
            encoderLookaheadMilliseconds: Double(session.encoderLookaheadFrameCount) * 1000 / Double(configuration.codecRate),
            conversionMilliseconds: Double(unit.conversionLatencyFrames) * voiceMilliseconds,
            processingMilliseconds: Double(unit.processingLatencyFrames) * voiceMilliseconds,
            devicePlaybackMilliseconds: Double(timing.playbackDelayFrames) * deviceMilliseconds,
            deviceCaptureMilliseconds: Double(timing.captureDelayFrames) * deviceMilliseconds)
    }

    /// Everything measured so far, for `ReportJSON`. Not real-time safe.
    public func report(stopReason: String? = nil) -> CallReport {
        let configuration = session.configuration
        let statistics = statistics
        let latency = latency
        let timing = device.timing
        let periodFrames = unit.deviceConfiguration.periodFrames
        let recordings = [
            microphoneRecorder.map { CallRecording(role: "microphone", recorder: $0,
                                                   deviceOffsetFrames: -(periodFrames + timing.captureDelayFrames)) },
            loudspeakerRecorder.map { CallRecording(role: "loudspeaker", recorder: $0,
                                                    deviceOffsetFrames: timing.playbackDelayFrames - periodFrames) },
            sentRecorder.map { CallRecording(role: "sent", recorder: $0) },
            farRecorder.map { CallRecording(role: "far end", recorder: $0) },
        ].compactMap { $0 }
        let call = statistics.call
        let expected = Double(call.packetsReceived) + Double(max(call.packetsLost, 0))
        let quality = EModel(oneWayDelayMilliseconds: latency.mouthToEarMilliseconds,
                             packetLossPercent: expected > 0 ? 100 * Double(max(call.packetsLost, 0)) / expected : 0)
        return CallReport(
            localAddress: "\(session.localAddress)", remoteAddress: "\(configuration.remote)", device: device.name,
            deviceRate: unit.deviceConfiguration.sampleRate, voiceRate: configuration.voiceRate,
            codecRate: configuration.codecRate, frameMilliseconds: configuration.frameDurationMilliseconds,
            bitsPerSecond: configuration.bitsPerSecond, inbandFEC: configuration.inbandFEC, dtx: configuration.dtx,
            seconds: elapsedSeconds, stopReason: stopReason, bypass: bypass, bypassToggles: bypassToggleCount,
            unit: statistics.unit, call: call, echoGroundTruth: statistics.echoGroundTruth, latency: latency,
            quality: CallQuality(model: quality), recordings: recordings, bypassEvents: recordingPaths.events,
            playoutMilliseconds: Double(session.playoutNanoseconds) / 1e6)
    }
}

/// A call endpoint's figures at one moment.
public struct CallEndpointStatistics: Sendable, Equatable, Codable {
    public var unit: VoiceProcessingStatistics
    public var call: CallStatistics
    /// ERLE over the device periods whose ground truth says echo alone (a simulated room); nil otherwise.
    public var echoGroundTruth: ERLEReport?
}
