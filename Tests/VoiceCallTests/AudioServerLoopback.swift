import SpawnSupport
import Foundation
import VoiceIO

/// The real audio servers the call tests run on: each is started privately by `scripts/<name>-loopback start|stop
/// DIR`, has a null sink whose monitor is the capture side, answers `pactl`, and opens as an `AudioDevice`.
/// Another server is one more case here (its script, its pactl address, its sink, its device).
enum AudioServerKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// PulseAudio, through alsa-lib's pulse plugin (Tests/ALSA/voiceio-test.conf).
    case pulse

    var description: String { rawValue }

    var script: String { "scripts/\(rawValue)-loopback" }

    /// The null sink the device plays into.
    var sinkName: String {
        switch self {
        case .pulse: "voiceio_test"
        }
    }

    /// `pactl --server` address of the server started in `directory`.
    func pactlServer(in directory: URL) -> String {
        switch self {
        case .pulse: "unix:\(directory.path)/native"
        }
    }

    /// The duplex device on the server started in `directory`: plays into the sink, captures its monitor.
    func makeDevice(in directory: URL) throws -> any AudioDevice {
        switch self {
        case .pulse:
            ALSAError.silenceLibraryMessages()
            let server = pactlServer(in: directory)
            let configPath = AudioServerLoopback.repositoryRoot.appendingPathComponent("Tests/ALSA/voiceio-test.conf").path
            let config = try ALSAConfig(contentsOf: configPath)
            return ALSADevice(playbackName: "voiceio_pulse_playback:SERVER=\"\(server)\"",
                              captureName: "voiceio_pulse_capture:SERVER=\"\(server)\"", config: config)
        }
    }
}

/// One private audio server for the length of a test (its script starts it in a temporary folder and stops it).
final class AudioServerLoopback {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let kind: AudioServerKind
    let directory: URL

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(_ kind: AudioServerKind) throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("voiceio-\(kind)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let script = Self.repositoryRoot.appendingPathComponent(kind.script).path
        let status = CleanSpawn.run(script, ["start", directory.path])
        guard status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw Failure(description: "\(kind.script) start failed (exit \(status))")
        }
    }

    func stop() {
        _ = CleanSpawn.run(Self.repositoryRoot.appendingPathComponent(kind.script).path, ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    func makeDevice() throws -> any AudioDevice { try kind.makeDevice(in: directory) }

    /// `pactl suspend-sink SINK 1|0`: the server stops (or resumes) consuming what the device plays; returns
    /// pactl's exit status.
    @discardableResult
    func suspendSink(_ suspended: Bool) -> Int32 {
        CleanSpawn.run("/usr/bin/env", ["pactl", "--server", kind.pactlServer(in: directory), "suspend-sink",
                                        kind.sinkName, suspended ? "1" : "0"])
    }
}
