import Foundation
import Testing
@testable import VoiceIO

/// A private headless PipeWire (scripts/pipewire-loopback): null sink `room`, its monitor the default source.
final class PipeWireLoopback: Sendable {
    let directory: URL
    /// The server's socket, for `PipeWireDevice(server:)`.
    var server: String { "\(directory.path)/runtime/pipewire-0" }

    init() throws {
        directory = try ALSATestSupport.temporaryDirectory()
        let status = PulseLoopback.runScript(["start", directory.path, "48000"], script: "scripts/pipewire-loopback")
        guard status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw PulseLoopbackError(message: "scripts/pipewire-loopback start failed (exit \(status))")
        }
    }

    func stop() {
        _ = PulseLoopback.runScript(["stop", directory.path], script: "scripts/pipewire-loopback")
        try? FileManager.default.removeItem(at: directory)
    }

    /// Kills the pipewire daemon alone with SIGKILL; returns the script's status.
    func crash() -> Int32 { PulseLoopback.runScript(["crash", directory.path], script: "scripts/pipewire-loopback") }

    /// Runs `pactl` against the server's pulse socket; returns its exit status.
    func pactl(_ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["pactl", "--server", "unix:\(directory.path)/runtime/pulse/native"] + arguments
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Stops (SIGSTOP) or continues (SIGCONT) the pipewire daemon: a server that stalls, as a starved one does.
    func pauseServer(_ paused: Bool) {
        guard let text = try? String(contentsOf: directory.appendingPathComponent("pipewire.pid"), encoding: .utf8),
              let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        kill(pid, paused ? SIGSTOP : SIGCONT)
    }

    @TaskLocal static var current: PipeWireLoopback?
    /// Why the daemon could not start, when it could not.
    @TaskLocal static var unavailableReason: String?

    /// The running loopback, or nil after printing why the test is skipped (the daemon could not start).
    static func require(_ test: String) -> PipeWireLoopback? {
        if let current { return current }
        print("\(test): skipped: no private PipeWire (\(unavailableReason ?? "not started"))")
        return nil
    }
}

/// Runs a suite with a private PipeWire started before its first test and stopped after its last. When the
/// daemon cannot start, the tests run without it and skip, printing the reason.
struct WithPipeWireLoopback: SuiteTrait, TestScoping {
    func provideScope(for test: Test, testCase: Test.Case?,
                      performing function: @Sendable () async throws -> Void) async throws {
        let loopback: PipeWireLoopback
        do {
            loopback = try PipeWireLoopback()
        } catch {
            try await PipeWireLoopback.$unavailableReason.withValue("\(error)") { try await function() }
            return
        }
        defer { loopback.stop() }
        try await PipeWireLoopback.$current.withValue(loopback) { try await function() }
    }
}

/// A cycle that plays 1 kHz tone bursts at given frame positions and records the capture; real-time safe.
final class ToneBurstProbe: @unchecked Sendable {
    let sampleRate: Int
    let burstStarts: [Int]
    let burstFrames: Int
    let captured: FrameRecorder
    private var frameIndex = 0

    init(sampleRate: Int, burstStarts: [Int], burstFrames: Int, capacityFrames: Int) {
        self.sampleRate = sampleRate
        self.burstStarts = burstStarts
        self.burstFrames = burstFrames
        captured = FrameRecorder(capacity: capacityFrames)
    }

    /// Frames the cycles have played so far (as many as were captured).
    var cycleFrames: Int { captured.frameCount }

    func cycle(_ capture: UnsafeBufferPointer<Float>, _ playback: UnsafeMutableBufferPointer<Float>) {
        captured.append(capture)
        for index in playback.indices {
            let inBurst = burstStarts.contains { frameIndex >= $0 && frameIndex < $0 + burstFrames }
            playback[index] = inBurst ? 0.5 * Float(sin(2 * Double.pi * 1000 * Double(frameIndex) / Double(sampleRate))) : 0
            frameIndex += 1
        }
    }

    /// For each burst, the frames from its start to its first captured sample above 0.1 (nil: never came back).
    func roundTripFrames() -> [Int?] {
        let frames = captured.frames
        return burstStarts.map { start in
            guard start < frames.count else { return nil }
            return frames[start...].firstIndex { abs($0) > 0.1 }.map { $0 - start }
        }
    }
}
