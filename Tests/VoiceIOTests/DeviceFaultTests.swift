import Foundation
import Synchronization
import Testing
@testable import VoiceIO

/// Device faults on the real-time PulseAudio loopback: the sink suspended and resumed, the I/O thread stalled
/// past the buffer, and the daemon killed under a running device.
///
/// Recovery times are printed (they are the figures hardening reports), not asserted: the assertions are that the
/// device recovers at all within a generous safety bound, reports no failure for a recoverable fault, and reports
/// one (and stops calling the cycle) when the device is gone.
@Suite(.serialized, WithPulseLoopback())
struct DeviceFaultTests {
    static let sampleRate = 48000

    static func device(on loopback: PulseLoopback) throws -> ALSADevice {
        ALSADevice(playbackName: loopback.playbackPCM, captureName: loopback.capturePCM,
                   config: try ALSATestSupport.config())
    }

    /// Runs `pactl` against the private daemon.
    static func pactl(_ loopback: PulseLoopback, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = ["--server", loopback.server] + arguments
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "pactl \(arguments.joined(separator: " ")) failed")
    }

    @Test func aSuspendedSinkResumesAndFramesFlowAgain() throws {
        let loopback = try #require(PulseLoopback.current)
        let device = try Self.device(on: loopback)
        let given = try device.open(requested: .request(sampleRate: Self.sampleRate))
        let bufferMilliseconds = Double(given.bufferFrames) * 1000 / Double(given.sampleRate)
        let cycles = CycleTimes(capacity: 4000)
        try device.start { _, _ in cycles.stamp() }
        defer { device.stop() }
        try #require(ALSATestSupport.wait(upToSeconds: 10) { cycles.count >= 20 }, "the loopback never started")

        var recoveryMilliseconds: [Double] = []
        for _ in 0..<3 {
            try Self.pactl(loopback, ["suspend-sink", "voiceio_test", "1"])
            usleep(300_000)
            let resumed = CycleTimes.now()
            try Self.pactl(loopback, ["suspend-sink", "voiceio_test", "0"])
            let flowing = ALSATestSupport.wait(upToSeconds: 5) { cycles.first(after: resumed) != nil }
            try #require(flowing, "no cycle within 5 s of the resume")
            let firstCycle = try #require(cycles.first(after: resumed))
            recoveryMilliseconds.append(Double(firstCycle - resumed) / 1e6)
            let countAfterResume = cycles.count
            try #require(ALSATestSupport.wait(upToSeconds: 5) { cycles.count >= countAfterResume + 20 },
                         "frames stopped again after the resume")
        }
        let timing = device.timing
        print("pulse suspend/resume: first cycle after resume \(recoveryMilliseconds.map { String(format: "%.1f", $0) }.joined(separator: ", ")) ms (buffer \(bufferMilliseconds) ms); xruns \(timing.xrunCount), poll timeouts \(device.statistics.waitTimeoutCount)")
        #expect(device.failure == nil, "a suspend is recoverable, not a failure: \(String(describing: device.failure))")
    }

    @Test func aStalledCycleIsRecoveredAndTheNextCycleComesPromptly() throws {
        let loopback = try #require(PulseLoopback.current)
        let device = try Self.device(on: loopback)
        let given = try device.open(requested: .request(sampleRate: Self.sampleRate))
        let bufferMilliseconds = Double(given.bufferFrames) * 1000 / Double(given.sampleRate)
        let stallCycles = [30, 80, 130]
        let cycles = CycleTimes(capacity: 4000)
        let stallEnds = CycleTimes(capacity: stallCycles.count)
        var count = 0
        try device.start { _, _ in
            cycles.stamp()
            count += 1
            if stallCycles.contains(count) {
                usleep(useconds_t(4 * bufferMilliseconds * 1000))
                stallEnds.stamp()
            }
        }
        let finished = ALSATestSupport.wait(upToSeconds: 15) { cycles.count >= stallCycles.last! + 30 }
        device.stop()
        try #require(finished, "frames stopped after a stall")
        let recoveries = stallEnds.times.map { end in Double((cycles.first(after: end) ?? end) - end) / 1e6 }
        print("stalled I/O thread (\(4 * bufferMilliseconds) ms each, buffer \(bufferMilliseconds) ms): next cycle \(recoveries.map { String(format: "%.1f", $0) }.joined(separator: ", ")) ms after each stall; xruns \(device.timing.xrunCount)")
        #expect(device.timing.xrunCount >= stallCycles.count)
        #expect(device.failure == nil)
    }

    /// Kills a daemon of its own (not the suite's) under a running device.
    @Test func aDeviceThatDisappearsReportsAFailureAndStopsCalling() throws {
        ALSAError.silenceLibraryMessages()
        let loopback = try PulseLoopback()
        defer { loopback.stop() }
        let device = try Self.device(on: loopback)
        _ = try device.open(requested: .request(sampleRate: Self.sampleRate))
        let cycles = CycleTimes(capacity: 4000)
        try device.start { _, _ in cycles.stamp() }
        defer { device.stop() }
        try #require(ALSATestSupport.wait(upToSeconds: 10) { cycles.count >= 20 }, "the loopback never started")

        let killed = CycleTimes.now()
        #expect(loopback.crash() == 0)
        let failed = ALSATestSupport.wait(upToSeconds: 5) { device.failure != nil }
        let noticedMilliseconds = Double(CycleTimes.now() - killed) / 1e6
        try #require(failed, "the device never reported the daemon's death")
        let failure = try #require(device.failure as? ALSAError)
        print("pulse daemon killed: failure reported after \(String(format: "%.0f", noticedMilliseconds)) ms: \(failure)")
        #expect(failure.description.contains(loopback.capturePCM) || failure.description.contains(loopback.playbackPCM))
        let countAtFailure = cycles.count
        usleep(100_000)
        #expect(cycles.count == countAtFailure, "the cycle is still being called after the failure")
        device.stop()
        #expect(device.failure != nil, "stop keeps the failure for whoever reads it after")

        // A new start on a new daemon clears it.
        let replacement = try PulseLoopback()
        defer { replacement.stop() }
        let fresh = try Self.device(on: replacement)
        _ = try fresh.open(requested: .request(sampleRate: Self.sampleRate))
        try fresh.start { _, _ in }
        #expect(fresh.failure == nil)
        fresh.stop()
    }
}

/// CLOCK_MONOTONIC times of I/O cycles in preallocated storage; `stamp` is real-time safe.
final class CycleTimes: @unchecked Sendable {
    private let storage: UnsafeMutableBufferPointer<Int64>
    private let stored = Atomic<Int>(0)

    init(capacity: Int) {
        storage = .allocate(capacity: capacity)
        storage.initialize(repeating: 0)
    }

    deinit { storage.deallocate() }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    var count: Int { stored.load(ordering: .acquiring) }
    var times: [Int64] { Array(storage[0..<count]) }

    func stamp() {
        let index = stored.load(ordering: .relaxed)
        guard index < storage.count else { return }
        storage[index] = Self.now()
        stored.store(index + 1, ordering: .releasing)
    }

    /// The first time stamped after `instant`, if any.
    func first(after instant: Int64) -> Int64? {
        storage[0..<count].first { $0 > instant }
    }
}
