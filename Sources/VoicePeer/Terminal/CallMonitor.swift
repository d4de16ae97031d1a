import Foundation
import VoiceCall
import VoiceIO

/// The main thread of `voicepeer call`: reads keys (raw terminal) and signals, toggles bypass and mute, reports
/// muted speech, stops the ringtone when the far end first talks, shows the status line on a terminal or logs a
/// plain line every few seconds otherwise, and prints the summary.
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

    private let unit: VoiceProcessingIO
    private let session: CallSession
    private let echoMeter: EchoReductionMeter?
    private let eventsPath: String?
    private let signals = SignalWatcher()
    private let start = Date()
    private var toggleCount = 0
    private let sounds: AppSoundGraph?
    private let mutedSpeech: MutedSpeechLog
    private var handledMuteSignals = 0
    /// The unit's live ERLE estimate sampled while the far end was audible, per bypass state.
    private var erleSamples: [Bool: [Float]] = [false: [], true: []]

    init(unit: VoiceProcessingIO, session: CallSession, echoMeter: EchoReductionMeter?, eventsPath: String?,
         sounds: AppSoundGraph? = nil) {
        self.unit = unit
        self.sounds = sounds
        mutedSpeech = MutedSpeechLog(unit: unit)
        self.session = session
        self.echoMeter = echoMeter
        self.eventsPath = eventsPath
        if let eventsPath { _ = FileManager.default.createFile(atPath: eventsPath, contents: nil) }
    }

    private var seconds: Double { Date().timeIntervalSince(start) }

    /// Runs until `duration`, `q`, SIGINT/SIGTERM/SIGHUP, or the device failing.
    func run(duration: Double?) -> StopReason {
        let terminal = RawTerminal()
        defer { terminal?.restore() }
        let isStatusTerminal = isatty(STDERR_FILENO) == 1
        if terminal != nil { print("keys: b toggles bypass, m toggles mute, q quits") }
        var handledSignals = 0
        var lastLog = 0.0
        while true {
            if let number = signals.stopSignal { return finishLine(.signal(number), isStatusTerminal) }
            if let failure = unit.device.failure { return finishLine(.deviceFailed("\(failure)"), isStatusTerminal) }
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
            let unitStatistics = unit.statistics
            if let sounds, sounds.isRinging, unitStatistics.farEnd.rmsDBFS > AppSoundGraph.farVoiceThresholdDBFS {
                sounds.stopRinging()
                report(String(format: "%.3f s: ringtone stopped, the far end talks", seconds), at: seconds,
                       event: "ringtone stopped", isStatusTerminal)
            }
            if unitStatistics.farEnd.rmsDBFS > -50 {
                erleSamples[unit.bypassVoiceProcessing, default: []].append(unitStatistics.erleDB)
            }
            let line = CallStatusLine.text(seconds: seconds, unit: unitStatistics, call: session.statistics,
                                           bypass: unit.bypassVoiceProcessing, muted: unit.isInputMuted)
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
        if isStatusTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
        return reason
    }

    private func toggle(by source: String, _ isStatusTerminal: Bool) {
        unit.bypassVoiceProcessing.toggle()
        toggleCount += 1
        let state = unit.bypassVoiceProcessing ? "on" : "off"
        let when = seconds
        report(String(format: "%.3f s: bypass %@ (%@)", when, state, source), at: when,
               event: "bypass \(state)\t\(source)", isStatusTerminal)
    }

    private func toggleMute(by source: String, _ isStatusTerminal: Bool) {
        unit.isInputMuted.toggle()
        let state = unit.isInputMuted ? "on" : "off"
        let when = seconds
        report(String(format: "%.3f s: mute %@ (%@)", when, state, source), at: when,
               event: "mute \(state)\t\(source)", isStatusTerminal)
    }

    /// Prints `line` (below the status line) and appends `event` at `when` seconds to the events file.
    private func report(_ line: String, at when: Double, event: String, _ isStatusTerminal: Bool) {
        if isStatusTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
        print(line)
        fflush(nil)
        if let eventsPath, let handle = FileHandle(forWritingAtPath: eventsPath) {
            handle.seekToEndOfFile()
            handle.write(Data(String(format: "%.3f\t%@\n", when, event).utf8))
            try? handle.close()
        }
    }

    func printSummary(reason: StopReason, recordings: [CallRecording]) {
        let call = session.statistics
        let unitStatistics = unit.statistics
        print(String(format: "call ended after %.1f s (%@); bypass toggled %d times, now %@", seconds,
                     reason.description, toggleCount, unit.bypassVoiceProcessing ? "on" : "off"))
        print("  sent: \(call.packetsSent) packets, \(call.payloadBytesSent) payload bytes, \(call.framesSkippedByDTX) DTX frames, \(call.sendErrors) send errors, \(call.rtcpSent) RTCP")
        print(String(format: "  received: %d packets, lost %lld, jitter %.1f ms, %d RTCP, RTT %@", call.packetsReceived,
                     call.packetsLost, call.jitterMilliseconds, call.rtcpReceived,
                     call.roundTripMilliseconds.map { String(format: "%.1f ms", $0) } ?? "unknown"))
        let buffer = call.jitterBuffer
        print(String(format: "  jitter buffer: delay %.0f ms (target %.0f), concealed %d, FEC %d, late %d, duplicates %d, underruns %d",
                     buffer.delayMilliseconds, buffer.targetDelayMilliseconds, buffer.concealed, buffer.fecRecovered,
                     buffer.late, buffer.duplicates, buffer.underruns))
        print(CallStatusLine.latencyControlSummary(buffer))
        let drops = call.dropped.map { "\($0.key) \($0.value)" }.sorted().joined(separator: ", ")
        print("  dropped: \(call.droppedTotal)\(drops.isEmpty ? "" : " (\(drops))"); SSRC takeovers \(call.sourceTakeovers)")
        for (bypassed, label) in [(false, "processing"), (true, "bypass")] {
            if let span = echoMeter?.span(bypassed: bypassed), let decibels = span.decibels {
                print(String(format: "  ERLE with %@: %.1f dB over %.1f s of far-end echo alone (near talker silent, the room's ground truth)",
                             label, decibels, Double(span.periodCount) * unit.deviceConfiguration.periodMilliseconds / 1000))
            }
            let samples = erleSamples[bypassed] ?? []
            guard !samples.isEmpty else { continue }
            let sorted = samples.sorted()
            print(String(format: "  unit's live ERLE estimate with %@: median %.1f dB over %.1f s of far-end voice", label,
                         sorted[sorted.count / 2], Double(samples.count) / 10))
        }
        print(String(format: "  unit: ERLE %.1f dB now, echo delay %.1f ms, xruns %d", unitStatistics.erleDB,
                     unitStatistics.delayMilliseconds, unitStatistics.deviceXrunCount))
        for recording in recordings {
            let recorder = recording.recorder
            let clock = recording.firstFrameSeconds.map { String(format: "; frame 0 at %.6f s monotonic", $0) } ?? ""
            print(String(format: "  recorded %@ %@: %.1f s (%d frames) at %d Hz%@%@", recording.role, recorder.path,
                         Double(recorder.framesWritten) / Double(recorder.sampleRate), recorder.framesWritten,
                         recorder.sampleRate,
                         recorder.droppedFrameCount > 0 ? " (\(recorder.droppedFrameCount) frames dropped)" : "", clock))
        }
        print("  mute \(unit.isInputMuted ? "on" : "off") at the end; muted speech started \(mutedSpeech.startCount) times")
        if let sounds { print("  app sound buses:\n" + sounds.summaryLines.map { "  " + $0 }.joined(separator: "\n")) }
        if let eventsPath { print("  bypass, mute and muted speech events: \(eventsPath)") }
    }
}
