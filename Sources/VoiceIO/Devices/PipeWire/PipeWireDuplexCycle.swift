import CPipeWire
import Glibc
import Synchronization

/// Joins a capture and a playback `pw_stream` into one duplex I/O cycle of fixed periods.
///
/// ```
///  capture stream --process--> capture ring (SPSC, 8 periods) --+
///                                                               | one whole period each
///  playback stream --process--> [pop period -> cycle -> carry] <-+ --> requested frames --> playback buffer
/// ```
/// Both process callbacks run on the context's real-time data thread, in whichever order the graph schedules
/// them (after a null sink's monitor, capture comes after playback: the cycle consumes the previous quantum).
/// The playback callback runs the cycle once per whole captured period until it holds the frames the graph asks
/// for (`pw_buffer.requested`; one period when the quantum is the period); a shortfall plays silence and counts
/// as an underrun once cycles have begun. Capture is kept only once playback has run, and capture that piles up
/// beyond what the next playback callback can take (playback stalled while capture ran) is dropped and counted,
/// so the capture side adds no delay of its own.
///
/// Everything is allocated in `init`; the callbacks allocate nothing, take no lock and log nothing.
final class PipeWireDuplexCycle: @unchecked Sendable {
    let cycleFrames: Int
    let sampleRate: Int
    private let cycle: DeviceIOCycle
    let counters: PipeWireDeviceCounters
    private let captureRing: SPSCRing<Float>
    private let captureMono: UnsafeMutableBufferPointer<Float>
    /// Output of cycles not yet handed to the graph (the graph asked for less than a period, or an odd amount).
    private let carry: UnsafeMutableBufferPointer<Float>
    private var carryFrames = 0
    private var hasRunCycle = false
    private var hasPlaybackRun = false
    private var hasCheckedScheduling = false
    private var cpuAtFirstCycle: Int?
    private let realTimePriority: Int32?

    /// Set by the device once the streams exist; read only on the data thread.
    var captureStream: OpaquePointer?
    var playbackStream: OpaquePointer?

    init(cycleFrames: Int, sampleRate: Int, cycle: @escaping DeviceIOCycle, counters: PipeWireDeviceCounters,
         realTimePriority: Int32?) {
        self.realTimePriority = realTimePriority
        self.cycleFrames = cycleFrames
        self.sampleRate = sampleRate
        self.cycle = cycle
        self.counters = counters
        captureRing = SPSCRing(minimumCapacity: 8 * cycleFrames, filledWith: 0)
        captureMono = .allocate(capacity: cycleFrames)
        captureMono.initialize(repeating: 0)
        carry = .allocate(capacity: 16 * cycleFrames)
        carry.initialize(repeating: 0)
    }

    deinit {
        captureMono.deallocate()
        carry.deallocate()
    }

    /// The process callbacks libpipewire calls with `Unmanaged` of this object.
    static let captureProcess: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        Unmanaged<PipeWireDuplexCycle>.fromOpaque(data!).takeUnretainedValue().processCapture()
    }
    static let playbackProcess: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
        Unmanaged<PipeWireDuplexCycle>.fromOpaque(data!).takeUnretainedValue().processPlayback()
    }

    // MARK: The real-time data thread

    private func processCapture() {
        guard let stream = captureStream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        checkSchedulingOnce()
        guard let data = voiceio_pw_buffer_data(buffer), let base = data.pointee.data, let chunk = data.pointee.chunk
        else { return }
        let offset = min(Int(chunk.pointee.offset), Int(data.pointee.maxsize))
        let byteCount = min(Int(chunk.pointee.size), Int(data.pointee.maxsize) - offset)
        let frameCount = byteCount / MemoryLayout<Float>.size
        // Until playback runs, capture would only pile up into delay.
        guard hasPlaybackRun else { return }
        let frames = UnsafeBufferPointer(start: (base + offset).assumingMemoryBound(to: Float.self), count: frameCount)
        let written = captureRing.write(frames)
        counters.capturedFrameCount.add(written, ordering: .relaxed)
        if written < frameCount { counters.droppedCaptureFrameCount.add(frameCount - written, ordering: .relaxed) }
        counters.captureDelayFrames.store(delayFrames(of: stream) + captureRing.availableToRead, ordering: .relaxed)
    }

    private func processPlayback() {
        guard let stream = playbackStream, let buffer = pw_stream_dequeue_buffer(stream) else { return }
        defer { pw_stream_queue_buffer(stream, buffer) }
        checkSchedulingOnce()
        guard let data = voiceio_pw_buffer_data(buffer), let base = data.pointee.data, let chunk = data.pointee.chunk
        else { return }
        let capacityFrames = Int(data.pointee.maxsize) / MemoryLayout<Float>.size
        let requested = Int(buffer.pointee.requested)
        let wanted = min(requested > 0 ? requested : cycleFrames, capacityFrames)
        while carryFrames < wanted, carryFrames + cycleFrames <= carry.count,
              captureRing.availableToRead >= cycleFrames {
            runOneCycle()
        }
        let output = UnsafeMutableBufferPointer(start: base.assumingMemoryBound(to: Float.self), count: wanted)
        let handed = min(carryFrames, wanted)
        for index in 0..<handed { output[index] = carry[index] }
        for index in handed..<wanted { output[index] = 0 }
        if handed < carryFrames {
            for index in handed..<carryFrames { carry[index - handed] = carry[index] }
        }
        carryFrames -= handed
        if handed < wanted, hasRunCycle { counters.underrunCount.add(1, ordering: .relaxed) }
        chunk.pointee.offset = 0
        chunk.pointee.stride = Int32(MemoryLayout<Float>.size)
        chunk.pointee.size = UInt32(wanted * MemoryLayout<Float>.size)
        buffer.pointee.size = UInt64(wanted)

        hasPlaybackRun = true
        let excess = captureRing.availableToRead - (cycleFrames + wanted)
        if excess > 0 {
            let dropped = captureRing.discard(excess)
            counters.droppedCaptureFrameCount.add(dropped, ordering: .relaxed)
        }
        // The buffer just queued plays at the graph's next cycle: it counts, with what the carry still holds.
        counters.playbackDelayFrames.store(delayFrames(of: stream) + wanted + carryFrames, ordering: .relaxed)
        recordCPUTime()
    }

    private func runOneCycle() {
        _ = captureRing.read(into: captureMono)
        let playback = UnsafeMutableBufferPointer(rebasing: carry[carryFrames..<(carryFrames + cycleFrames)])
        playback.update(repeating: 0)
        cycle(UnsafeBufferPointer(captureMono), playback)
        carryFrames += cycleFrames
        hasRunCycle = true
        counters.cycleCount.add(1, ordering: .relaxed)
    }

    /// The stream's delay to (or from) the device, in frames at `sampleRate`, from `pw_stream_get_time_n`.
    private func delayFrames(of stream: OpaquePointer) -> Int {
        var time = pw_time()
        guard pw_stream_get_time_n(stream, &time, MemoryLayout<pw_time>.size) == 0, time.rate.denom > 0 else { return 0 }
        let delay = Int(time.delay) * Int(time.rate.num) * sampleRate / Int(time.rate.denom)
        return max(delay, 0) + Int(time.buffered)
    }

    private func checkSchedulingOnce() {
        guard !hasCheckedScheduling else { return }
        hasCheckedScheduling = true
        if let realTimePriority {
            var parameters = sched_param(sched_priority: realTimePriority)
            _ = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters)
        }
        let policy = sched_getscheduler(0)
        counters.isRealTimeScheduled.store(policy == SCHED_FIFO || policy == SCHED_RR, ordering: .relaxed)
    }

    /// CPU time of the data thread since its first playback callback (a clock read, no allocation).
    private func recordCPUTime() {
        var now = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
        let nanoseconds = now.tv_sec * 1_000_000_000 + now.tv_nsec
        let first = cpuAtFirstCycle ?? nanoseconds
        cpuAtFirstCycle = first
        counters.ioThreadCPUNanoseconds.store(nanoseconds - first, ordering: .relaxed)
    }
}

/// What a `PipeWireDevice`'s streams counted: written on the data thread, read from any thread (relaxed atomics).
final class PipeWireDeviceCounters: Sendable {
    let playbackDelayFrames = Atomic<Int>(0)
    let captureDelayFrames = Atomic<Int>(0)
    let underrunCount = Atomic<Int>(0)
    let isRealTimeScheduled = Atomic<Bool>(false)
    let cycleCount = Atomic<Int>(0)
    let capturedFrameCount = Atomic<Int>(0)
    let droppedCaptureFrameCount = Atomic<Int>(0)
    let ioThreadCPUNanoseconds = Atomic<Int>(0)

    var timing: DeviceTiming {
        DeviceTiming(playbackDelayFrames: playbackDelayFrames.load(ordering: .relaxed),
                     captureDelayFrames: captureDelayFrames.load(ordering: .relaxed),
                     driftPPM: 0,
                     xrunCount: underrunCount.load(ordering: .relaxed),
                     isRealTimeScheduled: isRealTimeScheduled.load(ordering: .relaxed))
    }
}
