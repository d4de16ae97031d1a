import ArgumentParser
import VoiceIO

/// The audio device a command runs the unit on, as named by `--device`.
enum DeviceSelection: Equatable {
    /// The simulated room (`sim`).
    case simulated
    /// ALSA PCMs (`alsa:NAME`, or `alsa:PLAYBACK|CAPTURE` when the two directions are different PCMs).
    case alsa(playbackName: String, captureName: String)
    /// PipeWire streams (`pipewire`, `pipewire:TARGET` or `pipewire:SINK|SOURCE`); nil targets are the defaults.
    case pipeWire(playbackTarget: String?, captureTarget: String?)
    /// What the desktop uses (`default`): PipeWire when its socket answers, else ALSA's `default` PCM.
    case systemDefault

    /// Parses `sim`, `default`, `alsa:NAME`, `alsa:PLAYBACK|CAPTURE`, `pipewire`, `pipewire:TARGET` or
    /// `pipewire:SINK|SOURCE` (the forms the devices' `name` prints); nil otherwise.
    init?(parsing argument: String) {
        switch argument {
        case "sim": self = .simulated
        case "default": self = .systemDefault
        case "pipewire": self = .pipeWire(playbackTarget: nil, captureTarget: nil)
        default:
            if let names = Self.names(argument, prefix: "alsa:") {
                self = .alsa(playbackName: names.playback, captureName: names.capture)
            } else if let names = Self.names(argument, prefix: "pipewire:") {
                self = .pipeWire(playbackTarget: names.playback, captureTarget: names.capture)
            } else {
                return nil
            }
        }
    }

    /// `PREFIX NAME` or `PREFIX PLAYBACK|CAPTURE`, names not empty.
    private static func names(_ argument: String, prefix: String) -> (playback: String, capture: String)? {
        guard argument.hasPrefix(prefix) else { return nil }
        let names = argument.dropFirst(prefix.count).split(separator: "|", omittingEmptySubsequences: false)
            .map(String.init)
        guard (1...2).contains(names.count), names.allSatisfy({ !$0.isEmpty }) else { return nil }
        return (names[0], names[names.count - 1])
    }
}

/// `--device sim|default|alsa:NAME|pipewire[:TARGET]` and `--alsa-config FILE`, shared by the commands that run
/// the unit on a device.
struct DeviceOptions: ParsableArguments {
    @Option(help: """
        Audio device: sim (simulated room), default (PipeWire when it runs, else ALSA's default), alsa:NAME, \
        alsa:PLAYBACK|CAPTURE, pipewire, pipewire:TARGET (a sink, its monitor captured, or a source) or \
        pipewire:SINK|SOURCE. PipeWire's server is PIPEWIRE_REMOTE's (a socket path), else pipewire-0.
        """)
    var device = "sim"
    @Option(name: .customLong("alsa-config"), help: "Look ALSA PCM names up in this configuration file only.")
    var alsaConfig: String?

    func validate() throws {
        guard let selection = DeviceSelection(parsing: device) else {
            throw ValidationError("--device must be sim, default, alsa:NAME, alsa:PLAYBACK|CAPTURE, pipewire, pipewire:TARGET or pipewire:SINK|SOURCE (got \(device))")
        }
        if alsaConfig != nil, case .simulated = selection {
            throw ValidationError("--alsa-config needs --device alsa:NAME")
        }
        if alsaConfig != nil, case .pipeWire = selection {
            throw ValidationError("--alsa-config needs --device alsa:NAME")
        }
    }

    /// Valid after `validate`.
    var selection: DeviceSelection { DeviceSelection(parsing: device) ?? .simulated }

    /// A device of this machine (ALSA or PipeWire) rather than the simulated room.
    var isSystemDevice: Bool { selection != .simulated }

    /// The selected system device, opened once at `sampleRate` with `periodMilliseconds` periods so a missing,
    /// busy or unwilling device fails here with its library's reason (the unit opens it again with its own
    /// request); nil for the simulated room. Silences alsa-lib's own stderr messages: its errors come back in the
    /// thrown `ALSAError` (PipeWire's in `PipeWireError`). Not real-time safe.
    func openSystemDevice(sampleRate: Int, periodMilliseconds: Double = 10) throws
        -> (device: any AudioDevice, given: DeviceConfiguration)? {
        let request = DeviceConfiguration.request(sampleRate: sampleRate, periodMilliseconds: periodMilliseconds)
        switch selection {
        case .simulated:
            return nil
        case .pipeWire(let playbackTarget, let captureTarget):
            let device = playbackTarget == captureTarget
                ? PipeWireDevice(target: playbackTarget)
                : PipeWireDevice(playbackTarget: playbackTarget, captureTarget: captureTarget)
            return (device, try device.open(requested: request))
        case .systemDefault:
            let pipeWire = PipeWireDevice()
            let pipeWireError: any Error
            do {
                return (pipeWire, try pipeWire.open(requested: request))
            } catch {
                pipeWireError = error
            }
            do {
                return try openALSA(playbackName: "default", captureName: "default", request: request)
            } catch {
                throw CommandFailure("--device default: no PipeWire (\(pipeWireError)), and \(error)")
            }
        case .alsa(let playbackName, let captureName):
            return try openALSA(playbackName: playbackName, captureName: captureName, request: request)
        }
    }

    private func openALSA(playbackName: String, captureName: String, request: DeviceConfiguration) throws
        -> (device: any AudioDevice, given: DeviceConfiguration) {
        ALSAError.silenceLibraryMessages()
        let config = try alsaConfig.map { path throws(ALSAError) in try ALSAConfig(contentsOf: path) }
        let device = ALSADevice(playbackName: playbackName, captureName: captureName, config: config)
        return (device, try device.open(requested: request))
    }
}
