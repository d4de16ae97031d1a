import Glibc
import Synchronization
@testable import VoiceIO

/// Test instrument around a device: keeps the raw capture, and stalls the I/O thread once at a given cycle,
/// timing how much capture went missing across the stall (wall-clock time minus audio delivered, from the cycle
/// before the stall to 100 cycles after it). It can add a near talker to the capture from a given frame on (a
/// talker in the room, heard with the loopback's echo). The cycle it adds is real-time safe apart from the one
/// stall.
final class StallingTapDevice: AudioDevice, @unchecked Sendable {
    struct Gap {
        var stallMilliseconds: Double
        var lostMilliseconds: Double
    }

    let wrapped: any AudioDevice
    let microphone: FrameRecorder
    /// What the cycle gave the device to play, frame for frame beside `microphone`.
    let loudspeaker: FrameRecorder
    private let stallAtCycle: Int?
    private let stallMicroseconds: UInt32
    private let cycles = Atomic<Int>(0)
    private let lostMicroseconds = Atomic<Int>(-1)
    private let lateMicroseconds = Atomic<Int>(0)
    private var sampleRate = 1
    private var markNanoseconds = 0
    private var framesSinceMark = 0
    private var watch: DeliveryWatch
    private var watchAfterStall: DeliveryWatch?
    private let lateAfterStallMicroseconds = Atomic<Int>(0)
    /// The near talker (device rate; empty: none), the capture frame it starts at, and the capture with it added.
    private let nearTalker: UnsafeMutableBufferPointer<Float>
    private let nearTalkerFromFrame: Int
    private let heard: UnsafeMutableBufferPointer<Float>
    private var capturedFrames = 0

    /// `watchFromCycle`: the cycle from which `lateMilliseconds` watches the delivery. `nearTalker` (device rate) is
    /// added to the capture from frame `nearTalkerFromFrame` on.
    init(_ wrapped: any AudioDevice, capacityFrames: Int, stallAtCycle: Int?, stallMicroseconds: UInt32,
         watchFromCycle: Int = 100, nearTalker: [Float] = [], nearTalkerFromFrame: Int = 0) {
        self.wrapped = wrapped
        microphone = FrameRecorder(capacity: capacityFrames)
        loudspeaker = FrameRecorder(capacity: capacityFrames)
        self.nearTalker = .allocate(capacity: nearTalker.count)
        _ = self.nearTalker.initialize(from: nearTalker)
        self.nearTalkerFromFrame = nearTalkerFromFrame
        heard = .allocate(capacity: 16384)
        heard.initialize(repeating: 0)
        self.stallAtCycle = stallAtCycle
        self.stallMicroseconds = stallMicroseconds
        watch = DeliveryWatch(fromCycle: watchFromCycle)
        watchAfterStall = stallAtCycle.map { DeliveryWatch(fromCycle: $0 + Self.recoveryCycles) }
    }

    /// Cycles after the stall from which `lateAfterStallMilliseconds` watches: the device has recovered by then.
    static let recoveryCycles = 50

    /// From the watched cycle on, how much later than at its earliest the capture arrived, measured against
    /// the audio delivered (wall-clock time minus delivered frames' duration), in milliseconds: 0 when the
    /// loopback kept pace, the dropped or held-back audio when it did not.
    var lateMilliseconds: Double { Double(lateMicroseconds.load(ordering: .relaxed)) / 1000 }

    /// The same, watched from `recoveryCycles` after the stall: lateness the stall itself did not cause.
    var lateAfterStallMilliseconds: Double { Double(lateAfterStallMicroseconds.load(ordering: .relaxed)) / 1000 }

    var name: String { wrapped.name }
    var timing: DeviceTiming { wrapped.timing }
    var cycleCount: Int { cycles.load(ordering: .relaxed) }

    var gap: Gap? {
        let lost = lostMicroseconds.load(ordering: .acquiring)
        guard lost >= 0 else { return nil }
        return Gap(stallMilliseconds: Double(stallMicroseconds) / 1000, lostMilliseconds: Double(lost) / 1000)
    }

    func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        let given = try wrapped.open(requested: requested)
        sampleRate = given.sampleRate
        return given
    }

    deinit {
        nearTalker.deallocate()
        heard.deallocate()
    }

    func start(_ cycle: @escaping DeviceIOCycle) throws {
        try wrapped.start { [unowned self] capture, playback in
            let withTalker = addNearTalker(to: capture)
            microphone.append(withTalker)
            cycle(withTalker, playback)
            loudspeaker.append(UnsafeBufferPointer(playback))
            instrument(frameCount: capture.count)
        }
    }

    /// The capture with the near talker's frames for its span added (the capture itself without a talker).
    private func addNearTalker(to capture: UnsafeBufferPointer<Float>) -> UnsafeBufferPointer<Float> {
        defer { capturedFrames += capture.count }
        guard nearTalker.count > 0, capture.count <= heard.count else { return capture }
        for index in 0..<capture.count {
            let talkerIndex = capturedFrames + index - nearTalkerFromFrame
            heard[index] = capture[index] + (talkerIndex >= 0 && talkerIndex < nearTalker.count ? nearTalker[talkerIndex] : 0)
        }
        return UnsafeBufferPointer(rebasing: heard[..<capture.count])
    }

    func stop() { wrapped.stop() }

    private func instrument(frameCount: Int) {
        let cycle = cycles.add(1, ordering: .relaxed).newValue
        watchDelivery(cycle: cycle, frameCount: frameCount)
        guard let stallAtCycle else { return }
        if cycle == stallAtCycle - 1 {
            markNanoseconds = Self.monotonicNanoseconds()
            framesSinceMark = 0
        } else if cycle > stallAtCycle - 1 {
            framesSinceMark += frameCount
        }
        if cycle == stallAtCycle {
            usleep(stallMicroseconds)
        } else if cycle == stallAtCycle + 100 {
            let elapsed = Self.monotonicNanoseconds() - markNanoseconds
            let delivered = framesSinceMark * 1_000_000_000 / sampleRate
            lostMicroseconds.store((elapsed - delivered) / 1000, ordering: .releasing)
        }
    }

    private func watchDelivery(cycle: Int, frameCount: Int) {
        let now = Self.monotonicNanoseconds()
        if let late = watch.observe(cycle: cycle, frameCount: frameCount, sampleRate: sampleRate, now: now),
           late > lateMicroseconds.load(ordering: .relaxed) {
            lateMicroseconds.store(late, ordering: .relaxed)
        }
        if let late = watchAfterStall?.observe(cycle: cycle, frameCount: frameCount, sampleRate: sampleRate, now: now),
           late > lateAfterStallMicroseconds.load(ordering: .relaxed) {
            lateAfterStallMicroseconds.store(late, ordering: .relaxed)
        }
    }

    private static func monotonicNanoseconds() -> Int {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return now.tv_sec * 1_000_000_000 + now.tv_nsec
    }
}

/// How far a stream's delivery falls behind the wall clock from a given cycle on: wall-clock time minus the
/// delivered frames' duration, against its earliest value. Used on the I/O thread only (no allocation).
struct DeliveryWatch {
    let fromCycle: Int
    private var startNanoseconds = 0
    private var framesSinceStart = 0
    private var earliestSlipNanoseconds = Int.max

    init(fromCycle: Int) { self.fromCycle = fromCycle }

    /// Records one cycle's delivery; returns how late it came in microseconds (nil before `fromCycle`).
    mutating func observe(cycle: Int, frameCount: Int, sampleRate: Int, now: Int) -> Int? {
        guard cycle >= fromCycle else { return nil }
        if cycle == fromCycle {
            startNanoseconds = now
            framesSinceStart = 0
        }
        let slip = now - startNanoseconds - framesSinceStart * 1_000_000_000 / sampleRate
        earliestSlipNanoseconds = min(earliestSlipNanoseconds, slip)
        framesSinceStart += frameCount
        return (slip - earliestSlipNanoseconds) / 1000
    }
}
