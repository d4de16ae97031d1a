import ArgumentParser
import VoiceIO

/// The audio device a command runs the unit on, as named by `--device`.
enum DeviceSelection: Equatable {
    /// The simulated room (`sim`).
    case simulated
    /// ALSA PCMs (`alsa:NAME`, or `alsa:PLAYBACK|CAPTURE` when the two directions are different PCMs).
    case alsa(playbackName: String, captureName: String)

    /// Parses `sim`, `alsa:NAME` or `alsa:PLAYBACK|CAPTURE` (the form `ALSADevice.name` prints); nil otherwise.
    init?(parsing argument: String) {
        if argument == "sim" {
            self = .simulated
            return
        }
        guard argument.hasPrefix("alsa:") else { return nil }
        let names = argument.dropFirst(5).split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard (1...2).contains(names.count), names.allSatisfy({ !$0.isEmpty }) else { return nil }
        self = .alsa(playbackName: names[0], captureName: names[names.count - 1])
    }
}

/// `--device sim|alsa:NAME` and `--alsa-config FILE`, shared by the commands that run the unit on a device.
struct DeviceOptions: ParsableArguments {
    @Option(help: "Audio device: sim (simulated room), alsa:NAME, or alsa:PLAYBACK|CAPTURE for two PCMs.")
    var device = "sim"
    @Option(name: .customLong("alsa-config"), help: "Look ALSA PCM names up in this configuration file only.")
    var alsaConfig: String?

    func validate() throws {
        guard let selection = DeviceSelection(parsing: device) else {
            throw ValidationError("--device must be sim, alsa:NAME or alsa:PLAYBACK|CAPTURE (got \(device))")
        }
        if alsaConfig != nil, selection == .simulated {
            throw ValidationError("--alsa-config needs --device alsa:NAME")
        }
    }

    /// Valid after `validate`.
    var selection: DeviceSelection { DeviceSelection(parsing: device) ?? .simulated }

    var isALSA: Bool { selection != .simulated }

    /// The selected ALSA device, opened once at `sampleRate` with `periodMilliseconds` periods so a missing, busy
    /// or unwilling PCM fails here with alsa-lib's reason (the unit opens it again with its own request); nil for
    /// the simulated room. Silences alsa-lib's own stderr messages: its errors come back in the thrown
    /// `ALSAError`. Not real-time safe.
    func openALSADevice(sampleRate: Int, periodMilliseconds: Double = 10) throws
        -> (device: ALSADevice, given: DeviceConfiguration)? {
        guard case .alsa(let playbackName, let captureName) = selection else { return nil }
        ALSAError.silenceLibraryMessages()
        let config = try alsaConfig.map { path throws(ALSAError) in try ALSAConfig(contentsOf: path) }
        let device = ALSADevice(playbackName: playbackName, captureName: captureName, config: config)
        let given = try device.open(requested: .request(sampleRate: sampleRate, periodMilliseconds: periodMilliseconds))
        return (device, given)
    }
}
