import ArgumentParser
import Glibc
import VoiceIO

/// `voicepeer devices`: lists ALSA PCMs, or checks one by running it for a few seconds.
struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List PipeWire nodes and ALSA PCMs, or check a device (--check) by running it.",
        discussion: """
            Without options, prints PipeWire's sinks and sources (when its server answers) and the PCMs \
            alsa-lib knows (name and description), playback then capture; * marks the defaults.
            With --check NAME (alsa:NAME or pipewire[:TARGET]), opens NAME for playback and capture (or \
            --capture for another ALSA capture PCM), plays silence for --seconds and prints what the device \
            gave, its delays, xruns and the I/O thread's CPU use per second of audio.
            """
    )

    @Option(name: .long, help: "Check this device (playback, and capture unless --capture is given), e.g. alsa:default or pipewire.")
    var check: String?

    @Option(name: .long, help: "Capture PCM for --check when it differs from the playback one.")
    var capture: String?

    @Option(name: .long, help: "Look PCM names up in this ALSA configuration file instead of the global one.")
    var config: String?

    @Option(name: .long, help: "Seconds to run for --check.")
    var seconds: Double = 3

    @Option(name: .long, help: "Sample rate to ask for, in hertz.")
    var rate: Int = 48000

    func validate() throws {
        if capture != nil && check == nil { throw ValidationError("--capture goes with --check") }
        try FlagRange(flag: "--seconds", range: 0...3600, isLowerBoundExcluded: true).check(seconds)
        try FlagRange(flag: "--rate", range: 1000...768_000).check(rate)
    }

    func run() throws {
        ALSAError.silenceLibraryMessages()
        do {
            if let check, case .pipeWire(let playbackTarget, let captureTarget)? = DeviceSelection(parsing: check) {
                guard capture == nil, config == nil else {
                    throw CommandFailure("--capture and --config go with an ALSA --check; use pipewire:SINK|SOURCE")
                }
                try runPipeWireCheck(playbackTarget: playbackTarget, captureTarget: captureTarget)
            } else if let check {
                try runCheck(playbackName: Self.pcmName(check), captureName: Self.pcmName(capture ?? check))
            } else {
                try list()
            }
        } catch let error as ALSAError {
            printError(error.description)
            throw ExitCode.failure
        } catch let error as PipeWireError {
            printError(error.description)
            throw ExitCode.failure
        } catch let error as CommandFailure {
            printError(error.description)
            throw ExitCode.failure
        }
    }

    /// Accepts `alsa:NAME` (as `--device` does elsewhere) or a bare PCM name.
    static func pcmName(_ argument: String) -> String {
        argument.hasPrefix("alsa:") ? String(argument.dropFirst(5)) : argument
    }

    /// PipeWire's sinks and sources (when its server answers), then ALSA's PCMs; `*` marks the defaults.
    private func list() throws {
        let pipeWireNodes: [PipeWireNode]?
        do {
            pipeWireNodes = try PipeWireNodeList.nodes()
        } catch {
            pipeWireNodes = nil
            print("PipeWire: not available (\(error.description))")
        }
        if let pipeWireNodes {
            let width = min(pipeWireNodes.map(\.name.count).max() ?? 0, 40)
            let line = { (node: PipeWireNode, isDefault: Bool, note: String) in
                let padding = String(repeating: " ", count: max(width - node.name.count, 0))
                print("\(isDefault ? "* " : "  ")pipewire:\(node.name)\(padding)  \(node.description)\(note)")
            }
            print("PipeWire sinks:")
            let sinks = pipeWireNodes.filter { $0.kind == .sink }
            if sinks.isEmpty { print("  (none)") }
            for node in sinks { line(node, node.isDefault, "") }
            print("PipeWire sources (a sink as capture target means its monitor):")
            let sources = pipeWireNodes.filter { $0.kind == .source }
            let monitors = pipeWireNodes.filter(\.isDefaultSourceMonitor)
            if sources.isEmpty && monitors.isEmpty { print("  (none)") }
            for node in sources { line(node, node.isDefault, "") }
            for node in monitors { line(node, true, " (its monitor)") }
        }
        let pcms = try ALSADeviceList.pcms()
        let width = min(pcms.map(\.name.count).max() ?? 0, 40)
        for (title, selected) in [("ALSA playback PCMs", pcms.filter(\.canPlay)), ("ALSA capture PCMs", pcms.filter(\.canCapture))] {
            print("\(title):")
            if selected.isEmpty { print("  (none)") }
            for pcm in selected {
                let padding = String(repeating: " ", count: max(width - pcm.name.count, 0))
                print("\(pcm.name == "default" ? "* " : "  ")alsa:\(pcm.name)\(padding)  \(pcm.description)")
            }
        }
        print("--device default is \(pipeWireNodes != nil ? "pipewire (its default sink and source)" : "alsa:default")")
    }

    /// Runs PipeWire streams for `--seconds` playing silence; prints cycles, delays and the data thread's CPU.
    private func runPipeWireCheck(playbackTarget: String?, captureTarget: String?) throws {
        let device = playbackTarget == captureTarget
            ? PipeWireDevice(target: playbackTarget)
            : PipeWireDevice(playbackTarget: playbackTarget, captureTarget: captureTarget)
        let given = try device.open(requested: .request(sampleRate: rate))
        print("\(device.name): \(given)")
        try device.start { _, playback in playback.update(repeating: 0) }
        usleep(useconds_t(max(seconds, 0) * 1_000_000))
        let timing = device.timing
        let statistics = device.statistics
        let failure = device.pipeWireFailure
        device.stop()
        if let failure { throw failure }
        let audioSeconds = Double(statistics.capturedFrameCount) / Double(given.sampleRate)
        print("ran \(format(audioSeconds)) s of audio: \(statistics.cycleCount) cycles, underruns "
              + "\(statistics.underrunCount), dropped capture frames \(statistics.droppedCaptureFrameCount)")
        let delayMilliseconds = Double(timing.playbackDelayFrames + timing.captureDelayFrames) * 1000
            / Double(given.sampleRate)
        print("delay: playback \(timing.playbackDelayFrames) + capture \(timing.captureDelayFrames) frames "
              + "(\(format(delayMilliseconds)) ms); real-time thread: \(timing.isRealTimeScheduled ? "yes" : "no")")
        guard audioSeconds > 0 else { return }
        let cpuMilliseconds = Double(statistics.ioThreadCPUNanoseconds) / 1_000_000
        print("I/O thread CPU: \(format(cpuMilliseconds / audioSeconds)) ms per second of audio "
              + "(\(format(cpuMilliseconds / audioSeconds / 10)) % of one core)")
    }

    private func runCheck(playbackName: String, captureName: String) throws {
        let alsaConfig = try config.map { path throws(ALSAError) in try ALSAConfig(contentsOf: path) }
        let device = ALSADevice(playbackName: playbackName, captureName: captureName, config: alsaConfig)
        let given = try device.open(requested: .request(sampleRate: rate))
        for settings in [device.captureSettings, device.playbackSettings].compactMap({ $0 }) {
            print(settings)
        }
        try device.start { _, playback in playback.update(repeating: 0) }
        usleep(useconds_t(max(seconds, 0) * 1_000_000))
        let timing = device.timing
        device.stop()
        let statistics = device.statistics
        let audioSeconds = Double(statistics.capturedFrameCount) / Double(given.sampleRate)
        let delayFrames = timing.playbackDelayFrames + timing.captureDelayFrames
        let delayMilliseconds = Double(delayFrames) * 1000 / Double(given.sampleRate)
        let queueMilliseconds = Double(statistics.playbackQueueFrames) * 1000 / Double(given.sampleRate)
        print("ran \(format(audioSeconds)) s of audio: \(statistics.cycleCount) cycles, xruns \(timing.xrunCount), "
              + "dropped playback frames \(statistics.droppedPlaybackFrameCount), playback queued at the last start "
              + "\(statistics.playbackQueueFrames) frames (\(format(queueMilliseconds)) ms)")
        print("delay: playback \(timing.playbackDelayFrames) + capture \(timing.captureDelayFrames) frames "
              + "(\(format(delayMilliseconds)) ms); drift \(format(timing.driftPPM)) ppm; "
              + "real-time thread: \(timing.isRealTimeScheduled ? "yes (SCHED_FIFO)" : "no")")
        guard audioSeconds > 0 else { return }
        let cpuMilliseconds = Double(statistics.ioThreadCPUNanoseconds) / 1_000_000
        print("I/O thread CPU: \(format(cpuMilliseconds / audioSeconds)) ms per second of audio "
              + "(\(format(cpuMilliseconds / audioSeconds / 10)) % of one core)")
    }

    private func format(_ value: Double) -> String {
        let hundredths = (value * 100).rounded() / 100
        return "\(hundredths)"
    }

    private func printError(_ message: String) {
        let line = "voicepeer: \(message)\n"
        _ = line.withCString { write(STDERR_FILENO, $0, strlen($0)) }
    }
}
