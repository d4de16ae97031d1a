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
        let status = Self.run(Self.repositoryRoot.appendingPathComponent(kind.script).path, ["start", directory.path])
        guard status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw Failure(description: "\(kind.script) start failed (exit \(status))")
        }
    }

    func stop() {
        _ = Self.run(Self.repositoryRoot.appendingPathComponent(kind.script).path, ["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    func makeDevice() throws -> any AudioDevice { try kind.makeDevice(in: directory) }

    /// `pactl suspend-sink SINK 1|0`: the server stops (or resumes) consuming what the device plays; returns
    /// pactl's exit status.
    @discardableResult
    func suspendSink(_ suspended: Bool) -> Int32 {
        Self.run("/usr/bin/env", ["pactl", "--server", kind.pactlServer(in: directory), "suspend-sink", kind.sinkName,
                                  suspended ? "1" : "0"])
    }

    /// Runs a program with a clean signal mask (the test process blocks most signals, and a daemon inheriting
    /// that mask could not be stopped) and waits for it; returns its exit status.
    static func run(_ path: String, _ arguments: [String]) -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, path, nil, &attributes, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }
}
