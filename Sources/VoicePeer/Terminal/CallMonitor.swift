#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO

/// The main thread of `voicepeer call`: reads keys (raw terminal) and signals, toggles the endpoint's bypass and
/// mute, reports muted speech, stops the ringtone when the far end first talks, shows the status line on a
/// terminal or logs a plain line every few seconds otherwise, and prints the summary from the call's report.
final class CallMonitor {
    enum StopReason: CustomStringConvertible {
        case duration, key, signal(Int32)
        /// The device ended its I/O cycle by itself; the text is its failure, one line.
        case deviceFailed(String)

        var description: String {
            switch self {
            case .duration: "duration reached"
            case .key: "q pressed"
            case .signal(let number): String(cString: strsignal(number))
            case .deviceFailed(let failure): "device failed: \(failure)"
            }
        }
    }

    private let endpoint: CallEndpoint
    private let signals = SignalWatcher()
    private let sounds: AppSoundGraph?
    private let mutedSpeech: MutedSpeechLog
    private var handledMuteSignals = 0

    init(endpoint: CallEndpoint, sounds: AppSoundGraph? = nil) {
        self.endpoint = endpoint
        self.sounds = sounds
        mutedSpeech = MutedSpeechLog(unit: endpoint.unit)
    }

    private var seconds: Double { endpoint.elapsedSeconds }

    /// Runs until `duration`, `q`, SIGINT/SIGTERM/SIGHUP, or the device failing; calls `every.action` every
    /// `every.seconds`.
    func run(duration: Double?, every: (seconds: Double, action: () -> Void)? = nil) -> StopReason {
        let terminal = RawTerminal()
        defer { terminal?.restore() }
        let isStatusTerminal = isatty(STDERR_FILENO) == 1
        if terminal != nil { print("keys: b toggles bypass, m toggles mute, q quits") }
        var handledSignals = 0
        var lastLog = 0.0
        var lastAction = 0.0
        while true {
            if let number = signals.stopSignal { return finishLine(.signal(number), isStatusTerminal) }
            if let failure = endpoint.device.failure { return finishLine(.deviceFailed("\(failure)"), isStatusTerminal) }
            if let duration, seconds >= duration { return finishLine(.duration, isStatusTerminal) }
            while handledSignals < signals.userSignalCount {
                handledSignals += 1
                toggle(by: "SIGUSR1", isStatusTerminal)
            }
            while handledMuteSignals < signals.secondUserSignalCount {
                handledMuteSignals += 1
                toggleMute(by: "SIGUSR2", isStatusTerminal)
            }
            for event in mutedSpeech.take() {
                report(MutedSpeechLog.text(event), at: MutedSpeechLog.seconds(event), event: MutedSpeechLog.name(event),
                       isStatusTerminal)
            }
            if let terminal, let key = terminal.readKey(timeoutMilliseconds: 100) {
                if key == UInt8(ascii: "b") { toggle(by: "key", isStatusTerminal) }
                if key == UInt8(ascii: "m") { toggleMute(by: "key", isStatusTerminal) }
                if key == UInt8(ascii: "q") { return finishLine(.key, isStatusTerminal) }
            } else if terminal == nil {
                usleep(100_000)
            }
            if let every, seconds - lastAction >= every.seconds {
                lastAction = seconds
                every.action()
            }
            let statistics = endpoint.statistics
            if let sounds, sounds.isRinging, statistics.unit.farEnd.rmsDBFS > AppSoundGraph.farVoiceThresholdDBFS {
                sounds.stopRinging()
                report(String(cFormat: "%.3f s: ringtone stopped, the far end talks", seconds), at: seconds,
                       event: "ringtone stopped", isStatusTerminal)
            }
            let line = CallStatusLine.text(seconds: seconds, unit: statistics.unit, call: statistics.call,
                                           bypass: endpoint.bypass, muted: endpoint.isMicrophoneMuted)
            if isStatusTerminal {
                CallStatusLine.show(line)
            } else if seconds - lastLog >= 5 {
                lastLog = seconds
                print(line)
                fflush(nil)
            }
        }
    }

    private func finishLine(_ reason: StopReason, _ isStatusTerminal: Bool) -> StopReason {
        if isStatusTerminal { StandardError.write("\n") }
        return reason
    }

    private func toggle(by source: String, _ isStatusTerminal: Bool) {
        let when = endpoint.toggleBypass(source: source)
        if isStatusTerminal { StandardError.write("\n") }
        print(String(cFormat: "%.3f s: bypass %@ (%@)", when, endpoint.bypass ? "on" : "off", source))
        fflush(nil)
    }

    private func toggleMute(by source: String, _ isStatusTerminal: Bool) {
        endpoint.isMicrophoneMuted.toggle()
        let state = endpoint.isMicrophoneMuted ? "on" : "off"
        let when = seconds
        report(String(cFormat: "%.3f s: mute %@ (%@)", when, state, source), at: when,
               event: "mute \(state)\t\(source)", isStatusTerminal)
    }

    /// Prints `line` (below the status line) and notes `event` at `when` seconds in the call's events file.
    private func report(_ line: String, at when: Double, event: String, _ isStatusTerminal: Bool) {
        if isStatusTerminal { StandardError.write("\n") }
        print(line)
        fflush(nil)
        endpoint.noteEvent(event, atSeconds: when)
    }

    func printSummary(_ report: CallReport) {
        let call = report.call
        print(String(cFormat: "call ended after %.1f s (%@); bypass toggled %d times, now %@", report.seconds,
                     report.stopReason ?? "running", report.bypassToggles, report.bypass ? "on" : "off"))
        print("  sent: \(call.packetsSent) packets, \(call.payloadBytesSent) payload bytes, \(call.framesSkippedByDTX) DTX frames, \(call.sendErrors) send errors, \(call.rtcpSent) RTCP")
        print(String(cFormat: "  received: %d packets, lost %lld, jitter %.1f ms, %d RTCP, RTT %@", call.packetsReceived,
                     call.packetsLost, call.jitterMilliseconds, call.rtcpReceived,
                     call.roundTripMilliseconds.map { String(cFormat: "%.1f ms", $0) } ?? "unknown"))
        let buffer = call.jitterBuffer
        print(String(cFormat: "  jitter buffer: delay %.0f ms (target %.0f), concealed %d, FEC %d, late %d, duplicates %d, underruns %d",
                     buffer.delayMilliseconds, buffer.targetDelayMilliseconds, buffer.concealed, buffer.fecRecovered,
                     buffer.late, buffer.duplicates, buffer.underruns))
        print(CallStatusLine.latencyControlSummary(buffer))
        let drops = call.dropped.map { "\($0.key) \($0.value)" }.sorted().joined(separator: ", ")
        print("  dropped: \(call.droppedTotal)\(drops.isEmpty ? "" : " (\(drops))"); by the kernel (receive buffer full) \(call.droppedByKernel); SSRC takeovers \(call.sourceTakeovers)")
        for (bypassed, label) in [(false, "processing"), (true, "bypass")] {
            if let span = report.echoGroundTruth?.span(bypassed: bypassed), let decibels = span.decibels {
                print(String(cFormat: "  ERLE with %@: %.1f dB over %.1f s of far-end echo alone (near talker silent, the room's ground truth)",
                             label, decibels, span.seconds))
            }
            let unitSpan = report.unit.erle.span(bypassed: bypassed)
            guard let decibels = unitSpan.decibels else { continue }
            print(String(cFormat: "  unit's own ERLE estimate with %@: %.1f dB over %.1f s of far-end voice", label,
                         decibels, unitSpan.seconds))
        }
        let skipped = report.unit.erle.skipped
        print(String(cFormat: "  unit: ERLE %.1f dB now, echo delay %.1f ms, xruns %d; ERLE windows skipped: %d quiet far end, %d double talk",
                     report.unit.erleDB, report.unit.delayMilliseconds, report.unit.deviceXrunCount,
                     skipped.quietReference, skipped.doubleTalk))
        if let clipping = Summary.clippingWarning(report.unit, capturedFrames: nil) { print("  \(clipping)") }
        if report.unit.isNoEchoFound { print("  \(Summary.noEchoFoundNote)") }
        let latency = report.latency
        print(String(cFormat: "  quality: E-model R %.1f, MOS %.2f (mouth-to-ear %.0f ms%@, loss %.2f %%)",
                     report.quality.rFactor, report.quality.meanOpinionScore, latency.mouthToEarMilliseconds,
                     latency.networkOneWayMilliseconds == nil ? ", network unknown" : "",
                     report.quality.model.packetLossPercent))
        for recording in report.recordings {
            let clock = recording.firstFrameSeconds.map { String(cFormat: "; frame 0 at %.6f s monotonic", $0) } ?? ""
            print(String(cFormat: "  recorded %@ %@: %.1f s (%d frames) at %d Hz%@%@", recording.role, recording.path,
                         Double(recording.frames) / Double(recording.sampleRate), recording.frames,
                         recording.sampleRate,
                         recording.droppedFrames > 0 ? " (\(recording.droppedFrames) frames dropped)" : "", clock))
        }
        print("  mute \(endpoint.isMicrophoneMuted ? "on" : "off") at the end; muted speech started \(mutedSpeech.startCount) times")
        if let sounds { print("  app sound buses:\n" + sounds.summaryLines.map { "  " + $0 }.joined(separator: "\n")) }
        if let events = report.bypassEvents { print("  bypass, mute and muted speech events: \(events)") }
        let roomTime = report.roomSimulationMilliseconds.map { String(cFormat: ", room simulation %.1f ms", $0) } ?? ""
        print(String(cFormat: "  audio thread time: call playout (jitter buffer, Opus decoding) %.1f ms%@",
                     report.playoutMilliseconds, roomTime))
    }
}
