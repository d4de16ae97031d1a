import Foundation
import Synchronization
import Testing
import VoiceIO
@testable import VoiceCall

/// Times at which tone bursts start in what a device plays, stamped on the monotonic clock from the I/O cycle:
/// an onset is a sample above 0.15 after at least 100 ms of samples below 0.02 (and none above 0.15).
/// Preallocated; `scan` is real-time safe.
final class OnsetClock: @unchecked Sendable {
    private let times: UnsafeMutableBufferPointer<Int64>
    private let count = Atomic<Int>(0)
    private var quietFrames = 0
    private let rate: Int

    init(rate: Int, capacity: Int = 64) {
        self.rate = rate
        times = .allocate(capacity: capacity)
        times.initialize(repeating: 0)
    }

    deinit { times.deallocate() }

    /// `frames` start playing into the device at `nanoseconds`.
    func scan(_ frames: UnsafeMutableBufferPointer<Float>, at nanoseconds: Int64) {
        for (index, sample) in frames.enumerated() {
            if abs(sample) < 0.02 {
                quietFrames += 1
            } else if abs(sample) > 0.15 {
                let stored = count.load(ordering: .relaxed)
                if quietFrames >= rate / 10, stored < times.count {
                    times[stored] = nanoseconds + Int64(index) * 1_000_000_000 / Int64(rate)
                    count.store(stored + 1, ordering: .releasing)
                }
                quietFrames = 0
            }
        }
    }

    var onsets: [Int64] { Array(times[..<count.load(ordering: .acquiring)]) }
}

/// Calls on a real audio server (each of `AudioServerKind`) whose device stops consuming for 2 s: it starts
/// late, or the server suspends its sink mid-call (`pactl suspend-sink`). Peer B sends a 30 ms tone burst every
/// 1.5 s; peer A plays through the server. After the pause the delay from B's send to A's loudspeaker (the
/// moment A's I/O cycle hands the burst to the device, plus the device's playback delay) is back near what a
/// call has without a pause, not the pause's length. Before latency control: ~1.2 s (all that piled up).
@Suite(.serialized) struct AudioServerCallTests {
    static let rate = 48000
    static let burstSpacingFrames = rate * 3 / 2
    static let burstFrames = rate * 3 / 100
    static let firstBurstFrame = rate / 2

    enum Pause: String, CaseIterable, CustomStringConvertible {
        case lateStart, midCall
        var description: String { rawValue }
        /// When the sink is suspended and resumed, in seconds from the start of A's device.
        var seconds: (suspend: Double, resume: Double) {
            switch self {
            case .lateStart: (0, 2)
            case .midCall: (4, 6)
            }
        }
    }

    @Test(arguments: AudioServerKind.allCases, Pause.allCases)
    func delayIsBackNearTargetAfterTheDevicePauses(server kind: AudioServerKind, pause: Pause) throws {
        let server = try AudioServerLoopback(kind)
        defer { server.stop() }
        let pair = try CallPair(voiceRate: Self.rate)
        let device = try server.makeDevice()
        let given = try device.open(requested: .request(sampleRate: Self.rate))
        try #require(given.sampleRate == Self.rate)
        let onsets = OnsetClock(rate: Self.rate)
        let session = pair.a
        try pair.start()
        defer { pair.stop() }
        if pause == .lateStart { try #require(server.suspendSink(true) == 0) }
        let started = MonotonicClock.nanoseconds()
        try device.start { capture, playback in
            let now = MonotonicClock.nanoseconds()
            session.renderReceived(into: playback)
            onsets.scan(playback, at: now)
            session.sendCaptured(capture)
        }
        defer { device.stop() }
        let sender = BurstSender(session: pair.b, seconds: 12)
        sender.start()
        func sleep(until seconds: Double) {
            let target = started + Int64(seconds * 1e9)
            while MonotonicClock.nanoseconds() < target { usleep(10_000) }
        }
        if pause == .midCall {
            sleep(until: pause.seconds.suspend)
            try #require(server.suspendSink(true) == 0)
        }
        sleep(until: pause.seconds.resume)
        try #require(server.suspendSink(false) == 0)
        let resumed = MonotonicClock.nanoseconds()
        sender.join()
        let playbackMilliseconds = Double(device.timing.playbackDelayFrames) * 1000 / Double(Self.rate)
        let stats = session.statistics.jitterBuffer

        // Each onset belongs to the latest burst sent before it (bursts are 1.5 s apart; the bug held 1.2 s).
        let sends = sender.sendTimes
        let delays = onsets.onsets.compactMap { onset -> (sent: Int64, milliseconds: Double)? in
            guard let sent = sends.last(where: { $0 < onset }) else { return nil }
            return (sent, Double(onset - sent) / 1e6 + playbackMilliseconds)
        }
        let perBurst = delays.map { String(format: "%.0f", $0.milliseconds) }.joined(separator: " ")
        print("\(kind) \(pause): send to loudspeaker per burst (ms): \(perBurst); playback delay "
              + String(format: "%.0f ms; JB skipped %.0f ms, puller pauses %d, target %.0f ms", playbackMilliseconds,
                       stats.skippedMilliseconds, stats.pullGaps, stats.targetDelayMilliseconds))
        // The pause happened: audio piled up and was skipped.
        #expect(stats.skippedMilliseconds >= 500, "\(stats)")
        let afterRecovery = delays.filter { $0.sent >= resumed + 1_000_000_000 }
        #expect(afterRecovery.count >= 3, "bursts heard after recovery: \(afterRecovery.count)")
        for delay in afterRecovery {
            #expect(delay.milliseconds < 250, "a burst played \(delay.milliseconds) ms after it was sent")
        }
    }
}

/// Peer B's talker: 10 ms periods of silence with a 30 ms 1 kHz burst every 1.5 s, handed to the session in
/// real time on a thread of its own; notes when each burst's first frame was handed over.
final class BurstSender: @unchecked Sendable {
    private let session: CallSession
    private let periods: Int
    private let done = Atomic<Bool>(false)
    private let times = Mutex<[Int64]>([])

    init(session: CallSession, seconds: Int) {
        self.session = session
        periods = seconds * 100
    }

    func start() {
        // The thread keeps the sender alive only while it runs (a stored Thread would make a cycle: a leak).
        let thread = Thread { [self] in
            let rate = AudioServerCallTests.rate
            let periodFrames = rate / 100
            var frames = [Float](repeating: 0, count: periodFrames)
            runInRealTime(periods: periods) { period in
                var burstStart: Int?
                for index in 0..<periodFrames {
                    let frame = period * periodFrames + index
                    let offset = (frame - AudioServerCallTests.firstBurstFrame) % AudioServerCallTests.burstSpacingFrames
                    let inBurst = frame >= AudioServerCallTests.firstBurstFrame && offset < AudioServerCallTests.burstFrames
                    if inBurst, offset == 0 { burstStart = index }
                    frames[index] = inBurst ? 0.5 * Float(sin(2 * Double.pi * 1000 * Double(frame) / Double(rate))) : 0
                }
                if let burstStart {
                    let now = MonotonicClock.nanoseconds()
                    times.withLock { $0.append(now + Int64(burstStart) * 1_000_000_000 / Int64(rate)) }
                }
                frames.withUnsafeBufferPointer { session.sendCaptured($0) }
            }
            done.store(true, ordering: .releasing)
        }
        thread.start()
    }

    func join() {
        while !done.load(ordering: .acquiring) { usleep(10_000) }
    }

    var sendTimes: [Int64] { times.withLock { $0 } }
}
