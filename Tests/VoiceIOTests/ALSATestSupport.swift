import SpawnSupport
import Foundation
import Synchronization
import Testing
@testable import VoiceIO

/// Shared pieces of the ALSA tests: the shipped configuration, a real-time-safe frame recorder, temp folders,
/// and the private PulseAudio loopback.
enum ALSATestSupport {
    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Tests/ALSA/voiceio-test.conf, parsed into its own tree.
    static func config() throws -> ALSAConfig {
        try ALSAConfig(contentsOf: repositoryRoot.appendingPathComponent("Tests/ALSA/voiceio-test.conf").path)
    }

    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("voiceio-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Polls `condition` every millisecond for at most `seconds` (a safety bound, not a timing assertion).
    static func wait(upToSeconds seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if condition() { return true }
            usleep(1000)
        }
        return condition()
    }
}

/// Keeps the first `capacity` frames handed to it, in preallocated storage; safe to call from an I/O cycle.
final class FrameRecorder: @unchecked Sendable {
    let storage: UnsafeMutableBufferPointer<Float>
    private let count = Atomic<Int>(0)

    init(capacity: Int) {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: .nan)
    }

    deinit { storage.deallocate() }

    /// Frames recorded so far.
    var frameCount: Int { count.load(ordering: .acquiring) }
    var isFull: Bool { frameCount == storage.count }

    /// Real-time safe.
    func append(_ frames: UnsafeBufferPointer<Float>) {
        let start = count.load(ordering: .relaxed)
        let taken = min(frames.count, storage.count - start)
        guard taken > 0 else { return }
        for index in 0..<taken { storage[start + index] = frames[index] }
        count.store(start + taken, ordering: .releasing)
    }

    var frames: [Float] { Array(storage[0..<frameCount]) }
}

/// A private PulseAudio daemon (scripts/pulse-loopback) for the duration of one suite.
final class PulseLoopback: Sendable {
    let directory: URL
    /// Socket address for the `SERVER` argument of the test PCMs.
    var server: String { "unix:\(directory.path)/native" }
    var playbackPCM: String { "voiceio_pulse_playback:SERVER=\"\(server)\"" }
    var capturePCM: String { "voiceio_pulse_capture:SERVER=\"\(server)\"" }
    /// A headset's microphone: the monitor of a second null sink that hears none of the playback.
    var headsetCapturePCM: String { "voiceio_pulse_headset_capture:SERVER=\"\(server)\"" }

    init() throws {
        directory = try ALSATestSupport.temporaryDirectory()
        let status = Self.runScript(["start", directory.path, "48000"])
        guard status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw PulseLoopbackError(message: "scripts/pulse-loopback start failed (exit \(status))")
        }
    }

    func stop() {
        _ = Self.runScript(["stop", directory.path])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the daemon alone with SIGKILL (a device disappearing under its clients); returns the script's status.
    func crash() -> Int32 { Self.runScript(["crash", directory.path]) }

    /// Runs `script` (scripts/pulse-loopback by default) with a clean signal mask (the test process blocks most
    /// signals, and a daemon inheriting that mask could not be stopped); returns its exit status.
    static func runScript(_ arguments: [String], script: String = "scripts/pulse-loopback") -> Int32 {
        let path = ALSATestSupport.repositoryRoot.appendingPathComponent(script).path
        return CleanSpawn.run(path, arguments)
    }

    @TaskLocal static var current: PulseLoopback?
}

struct PulseLoopbackError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// Runs a suite with a private PulseAudio loopback started before its first test and stopped after its last.
struct WithPulseLoopback: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let loopback = try PulseLoopback()
        defer { loopback.stop() }
        try await PulseLoopback.$current.withValue(loopback) { try await function() }
    }
}
