import CAllocCounter
import Foundation
import Synchronization
import Testing
@testable import VoiceIO

/// `PipeWireDevice` on a private PipeWire: what it plays into the null sink `room` comes back from its monitor,
/// through libpipewire's streams and the server's real-time graph.
@Suite(.serialized, WithPipeWireLoopback())
struct PipeWireDeviceTests {
    static let sampleRate = 48000

    static func device(_ loopback: PipeWireLoopback) -> PipeWireDevice {
        PipeWireDevice(server: loopback.server, target: "room")
    }

    /// Runs `probe` on a fresh device until it captured its capacity (or 15 s passed), calling `during` once the
    /// cycles are running (with the device). Returns the device's timing and statistics.
    static func run(_ probe: ToneBurstProbe, loopback: PipeWireLoopback, beforeStart: () -> Void = {},
                    during: (PipeWireDevice) -> Void = { _ in }) throws
        -> (timing: DeviceTiming, statistics: PipeWireDeviceStatistics, failure: PipeWireError?, given: DeviceConfiguration) {
        let device = Self.device(loopback)
        let given = try device.open(requested: .request(sampleRate: sampleRate))
        beforeStart()
        try device.start { probe.cycle($0, $1) }
        during(device)
        let filled = ALSATestSupport.wait(upToSeconds: 15) { probe.captured.isFull }
        let result = (device.timing, device.statistics, device.pipeWireFailure, given)
        device.stop()
        try #require(filled, "the loopback delivered \(probe.captured.frameCount) frames in 15 s")
        return result
    }

    @Test func aToneComesBackThroughTheNullSinkWithItsDelay() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let probe = ToneBurstProbe(sampleRate: Self.sampleRate, burstStarts: [Self.sampleRate / 2, Self.sampleRate * 3 / 2],
                                   burstFrames: Self.sampleRate / 4, capacityFrames: 2 * Self.sampleRate)
        let started = ContinuousClock.now
        let run = try Self.run(probe, loopback: loopback)
        let elapsed = ContinuousClock.now - started
        let delays = probe.roundTripFrames()
        let milliseconds = delays.map { $0.map { Double($0) * 1000 / Double(Self.sampleRate) } }
        print("pipewire loopback: round trip \(milliseconds.map { $0.map { "\($0) ms" } ?? "none" }) with periods of \(run.given.periodFrames) frames; device reports playback \(run.timing.playbackDelayFrames) + capture \(run.timing.captureDelayFrames) frames; underruns \(run.statistics.underrunCount), dropped capture \(run.statistics.droppedCaptureFrameCount), real-time thread \(run.timing.isRealTimeScheduled)")
        #expect(run.given.sampleRate == Self.sampleRate)
        #expect(run.given.periodFrames == 512, "10 ms at 48 kHz is asked as the power-of-two quantum 512")
        for delay in delays {
            let frames = try #require(delay, "a burst never came back")
            #expect(frames >= 0 && frames <= 4 * run.given.periodFrames, "round trip \(frames) frames")
        }
        let reported = run.timing.playbackDelayFrames + run.timing.captureDelayFrames
        if let first = delays[0] {
            #expect(abs(reported - first) <= run.given.periodFrames, "the device reports \(reported) frames, measured \(first)")
        }
        if let first = delays[0], let second = delays[1] {
            #expect(abs(first - second) <= run.given.periodFrames, "the delay moved between bursts: \(delays)")
        }
        let frames = probe.captured.frames
        let onset = Self.sampleRate / 2 + (delays[0] ?? 0)
        #expect(ALSAPulseLoopbackTests.rms(frames[..<max(onset - 64, 0)]) < 0.001, "not silent before the tone")
        let body = frames[(onset + 2400)..<(onset + 2400 + 4800)]
        let level = 20 * log10(ALSAPulseLoopbackTests.rms(body) / (0.5 / 2.0.squareRoot()))
        #expect(abs(level) < 1, "tone level off by \(level) dB")
        #expect(ALSAPulseLoopbackTests.toneFraction(body, hertz: 1000) > 0.99)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        // A sanity bound on pace (not a timing assertion): 2 s of audio at about real-time pace.
        #expect(seconds > 1.5 && seconds < 8, "2 s of audio took \(seconds) s")
    }

    /// The data thread allocates nothing from one cycle to a later one: the capture and playback process
    /// callbacks, the ring, the cycle and libpipewire's own work for the two streams in between. The positive
    /// control allocates once inside the counted span and must see it counted.
    @Test(arguments: [false, true])
    func theDataThreadAllocatesNothing(positiveControl: Bool) throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let device = Self.device(loopback)
        _ = try device.open(requested: .request(sampleRate: Self.sampleRate))
        let allocations = Atomic<Int>(-1)
        let countedCycles = 200
        var cycle = 0
        var controlBlock: UnsafeMutableRawPointer?   // kept until the end: an optimised build drops a malloc freed at once
        defer { free(controlBlock) }
        try device.start { _, playback in
            cycle += 1
            if cycle == 20 { alloc_counter_start() }
            if positiveControl, cycle == 100 { controlBlock = malloc(16) }
            if cycle == 20 + countedCycles { allocations.store(Int(alloc_counter_stop()), ordering: .releasing) }
            playback.update(repeating: 0.1)
        }
        let counted = ALSATestSupport.wait(upToSeconds: 10) { allocations.load(ordering: .acquiring) >= 0 }
        device.stop()
        try #require(counted)
        let count = allocations.load(ordering: .acquiring)
        print("pipewire data thread: \(count) allocations over \(countedCycles) cycles (positive control \(positiveControl))")
        if positiveControl { #expect(count >= 1) } else { #expect(count == 0) }
    }

    /// The server stalls (SIGSTOP) for 2 s between `start` and the first cycle: the device starts late, and the
    /// audio of that time becomes no delay: the round trip is what it is on a device that started at once.
    @Test func aDeviceThatStartsLateKeepsItsDelay() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let probe = ToneBurstProbe(sampleRate: Self.sampleRate, burstStarts: [Self.sampleRate / 2],
                                   burstFrames: Self.sampleRate / 4, capacityFrames: Self.sampleRate)
        let started = ContinuousClock.now
        let run = try Self.run(probe, loopback: loopback, beforeStart: { loopback.pauseServer(true) }, during: { _ in
            usleep(2_000_000)
            #expect(probe.cycleFrames == 0, "cycles ran while the server was stopped")
            loopback.pauseServer(false)
        })
        let elapsed = ContinuousClock.now - started
        let delay = try #require(probe.roundTripFrames()[0], "the burst never came back")
        print("pipewire late start: first second of audio after \(elapsed); round trip \(delay) frames; underruns \(run.statistics.underrunCount), dropped capture \(run.statistics.droppedCaptureFrameCount)")
        #expect(elapsed > .seconds(2))
        #expect(delay >= 0 && delay <= 4 * run.given.periodFrames, "round trip \(delay) frames after a late start")
        #expect(run.failure == nil)
    }

    /// Mid-run, the sink is suspended (`pactl suspend-sink room 1`) and resumed 2 s later; then, separately, the
    /// server stalls (SIGSTOP) for 2 s. Each time the cycles go on afterwards with no failure, and a tone played
    /// after it comes back with the delay it had before (the pause became no delay).
    @Test(arguments: ["suspend", "stall"])
    func theDeviceRecoversFromAPause(kind: String) throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let rate = Self.sampleRate
        // The cycles run on through a suspend (another driver takes over the streams, the sink plays nothing)
        // but not through a stall: the second burst is played after either pause.
        let probe = ToneBurstProbe(sampleRate: rate, burstStarts: [rate / 2, 7 * rate / 2], burstFrames: rate / 4,
                                   capacityFrames: 9 * rate / 2)
        var cyclesBefore = 0
        var pausedCycles = 0
        let run = try Self.run(probe, loopback: loopback, during: { device in
            _ = ALSATestSupport.wait(upToSeconds: 5) { probe.cycleFrames >= rate }
            cyclesBefore = device.statistics.cycleCount
            if kind == "suspend" {
                #expect(loopback.pactl(["suspend-sink", "room", "1"]) == 0)
                usleep(2_000_000)
                pausedCycles = device.statistics.cycleCount - cyclesBefore
                #expect(loopback.pactl(["suspend-sink", "room", "0"]) == 0)
            } else {
                loopback.pauseServer(true)
                usleep(2_000_000)
                pausedCycles = device.statistics.cycleCount - cyclesBefore
                loopback.pauseServer(false)
            }
        })
        let delays = probe.roundTripFrames()
        print("pipewire \(kind): \(pausedCycles) cycles ran during the 2 s pause (from cycle \(cyclesBefore)); round trips before and after \(delays) frames; underruns \(run.statistics.underrunCount), dropped capture \(run.statistics.droppedCaptureFrameCount), capture relinks \(run.statistics.captureRelinkCount)")
        if kind == "stall" { #expect(pausedCycles <= 2, "cycles ran while the server was stopped") }
        if kind == "suspend" { #expect(run.statistics.captureRelinkCount >= 1, "the capture stream was not relinked") }
        #expect(run.failure == nil)
        #expect(run.statistics.cycleCount >= 4 * rate / run.given.periodFrames, "cycles did not go on")
        let before = try #require(delays[0], "the first burst never came back")
        let after = try #require(delays[1], "the burst after the pause never came back")
        #expect(abs(after - before) <= run.given.periodFrames, "the delay grew from \(before) to \(after) frames")
    }

    /// The data thread is held up once mid-run (a 25 ms sleep in one cycle, as a machine that is busy for a moment
    /// holds it): the graph plays silence for what the cycle did not deliver in time, the playback callback counts it
    /// as an underrun, and the capture of that time comes late. The round trip of a tone played after it is the
    /// one before, to the frame: the echo stays where the canceller learned it.
    @Test func anUnderrunKeepsTheRoundTrip() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let rate = Self.sampleRate
        let probe = ToneBurstProbe(sampleRate: rate, burstStarts: [rate / 2, 5 * rate / 2], burstFrames: rate / 4,
                                   capacityFrames: 7 * rate / 2)
        let device = Self.device(loopback)
        let given = try device.open(requested: .request(sampleRate: rate))
        let holdUp = Atomic<Bool>(false)
        try device.start { capture, playback in
            if holdUp.exchange(false, ordering: .relaxed) { usleep(25_000) }
            probe.cycle(capture, playback)
        }
        _ = ALSATestSupport.wait(upToSeconds: 5) { probe.cycleFrames >= 3 * rate / 2 }
        holdUp.store(true, ordering: .relaxed)
        let filled = ALSATestSupport.wait(upToSeconds: 15) { probe.captured.isFull }
        let statistics = device.statistics
        device.stop()
        try #require(filled)
        let delays = probe.roundTripFrames()
        print("pipewire underrun: round trips before and after \(delays) frames; underruns \(statistics.underrunCount), dropped capture \(statistics.droppedCaptureFrameCount), periods of \(given.periodFrames) frames")
        let before = try #require(delays[0], "the first burst never came back")
        let after = try #require(delays[1], "the burst after the underrun never came back")
        #expect(statistics.underrunCount >= 1, "the hold-up caused no underrun")
        #expect(abs(after - before) <= 2, "the round trip moved from \(before) to \(after) frames")
    }

    @Test func aTargetThatIsNotThereIsATypedError() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let device = PipeWireDevice(server: loopback.server, target: "no_such_sink")
        #expect {
            _ = try device.open(requested: .request(sampleRate: Self.sampleRate))
        } throws: { error in
            let description = "\(error)"
            return error is PipeWireError && description.contains("no_such_sink") && description.contains(loopback.server)
        }
    }

    @Test func theNodeListShowsTheNullSinkAsDefault() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let nodes = try PipeWireNodeList.nodes(server: loopback.server)
        let room = try #require(nodes.first { $0.name == "room" }, "nodes: \(nodes)")
        #expect(room.kind == .sink)
        #expect(room.isDefault)
    }
}

/// Errors without a server: one line naming the socket and what to try.
@Suite struct PipeWireErrorTests {
    @Test func aMissingServerNamesItsSocketAndWhatToTry() throws {
        let socket = "/tmp/voiceio-no-pipewire-\(getpid())/pipewire-0"
        let device = PipeWireDevice(server: socket)
        #expect {
            _ = try device.open(requested: .request(sampleRate: 48000))
        } throws: { error in
            guard let error = error as? PipeWireError else { return false }
            let text = error.description
            return error.isServerGone && text.contains(socket) && text.contains("PipeWire running")
                && !text.contains("\n")
        }
    }

    @Test func quantaArePowersOfTwoNearTheRequest() {
        #expect(PipeWireDevice.quantumFrames(near: 480) == 512)
        #expect(PipeWireDevice.quantumFrames(near: 160) == 128)
        #expect(PipeWireDevice.quantumFrames(near: 441) == 512)
        #expect(PipeWireDevice.quantumFrames(near: 256) == 256)
        #expect(PipeWireDevice.quantumFrames(near: 1) == 1)
    }
}

/// The server killed (SIGKILL) under a running device: the cycle ends, `failure` carries PipeWire's message and
/// names the server, and `stop` returns. Its own daemon, as the test kills it.
@Suite(.serialized, WithPipeWireLoopback())
struct PipeWireServerLossTests {
    @Test func aKilledServerIsATypedFailure() throws {
        guard let loopback = PipeWireLoopback.require(#function) else { return }
        let device = PipeWireDevice(server: loopback.server, target: "room")
        _ = try device.open(requested: .request(sampleRate: 48000))
        let cycles = Atomic<Int>(0)
        try device.start { _, playback in
            cycles.add(1, ordering: .relaxed)
            playback.update(repeating: 0)
        }
        #expect(ALSATestSupport.wait(upToSeconds: 5) { cycles.load(ordering: .relaxed) >= 50 })
        #expect(device.failure == nil)
        #expect(loopback.crash() == 0)
        let failed = ALSATestSupport.wait(upToSeconds: 5) { device.failure != nil }
        let cyclesAtFailure = cycles.load(ordering: .relaxed)
        usleep(200_000)
        let failure = device.pipeWireFailure
        device.stop()
        print("pipewire killed: \(failure.map { "\($0)" } ?? "no failure") after \(cyclesAtFailure) cycles")
        try #require(failed, "no failure reported within 5 s of the kill")
        let error = try #require(failure)
        #expect(error.isServerGone, "code \(error.code): \(error)")
        #expect(error.description.contains(loopback.server))
        #expect(cycles.load(ordering: .relaxed) == cyclesAtFailure, "cycles ran after the server died")
    }
}
