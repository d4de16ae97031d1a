import CALSA
import Glibc
import Synchronization

/// The duplex I/O loop of an `ALSADevice`, on its own pthread.
///
/// ```
///  capture PCM --poll--> readi (one period) --> mono Float --> cycle --> mono Float --> writei --> playback PCM
///        ^ wake-up pipe (stop)                                                    (prefilled with silence)
/// ```
/// The capture clock drives the loop: each period captured is one call of the cycle and one period written.
/// Capture is read as it arrives (plugins such as `pulse` deliver partial periods and wake poll early) and
/// assembled into whole periods; a wake-up that brings no frames is followed by a 1 ms back-off, so the thread
/// never spins at real-time priority.
/// Playback is prefilled with silence so it never waits on the cycle. On an xrun or suspend on either side the
/// failing PCM is recovered with `snd_pcm_recover`, then both are dropped, prepared, prefilled and started
/// again together so the capture-to-playback alignment stays what it was (the echo canceller relies on it).
/// The prefill starts at the starting buffer less a period and grows a period at each playback underrun, up to the
/// playback PCM's buffer less a period: a server that could not keep that much queued gets more from then on.
/// A recovery that brings no cycle before the next one is futile: the loop backs off `futileRecoveryBackOff`
/// before trying again, and after `maximumFutileRecoveries` in a row (about 100 ms of trying) it records the
/// error in the counters and ends: the device is gone (a PulseAudio server that died, a USB device unplugged),
/// and `ALSADevice.failure` says so instead of the thread spinning at real-time priority for ever.
///
/// Everything the loop touches is allocated in `init`; the loop itself allocates nothing, takes no lock of its
/// own and logs nothing. (alsa-lib plugins such as `pulse` lock internally, and may allocate while recovering.)
final class ALSAIOThread: @unchecked Sendable {
    private let capture: ALSAPCM
    private let playback: ALSAPCM
    private let captureFormat: StreamFormat
    private let playbackFormat: StreamFormat
    /// Frames per cycle: the capture period.
    private let cycleFrames: Int
    /// Frames of silence queued for playback at each (re)start; grown by `recover` after playback underruns.
    private var prefillFrames: Int
    private let mostPrefillFrames: Int
    private let captureBufferFrames: Int
    private let cycle: DeviceIOCycle
    private let counters: ALSADeviceCounters
    private let realTimePriority: Int32?
    private let isLinked: Bool

    private let captureDeviceBuffer: UnsafeMutableRawPointer
    private let playbackDeviceBuffer: UnsafeMutableRawPointer
    private let captureMono: UnsafeMutableBufferPointer<Float>
    private let playbackMono: UnsafeMutableBufferPointer<Float>
    private let pollDescriptors: UnsafeMutableBufferPointer<pollfd>
    private let capturePollCount: Int
    /// Wake-up pipe: `stop` writes a byte to [1]; the loop polls [0] with the capture descriptors.
    private let wakePipe: UnsafeMutablePointer<Int32>
    private let waitTimeoutMilliseconds: Int32

    private let stopRequested = Atomic<Bool>(false)
    private let hasExited = Atomic<Bool>(false)
    private var thread = pthread_t()

    // Loop state, touched only by the I/O thread.
    private var framesReadSinceStart = 0
    /// Frames of the current period already read into `captureDeviceBuffer`.
    private var captureFillFrames = 0
    /// The last poll woke up but no frame followed.
    private var lastWakeWasEmpty = false
    private var framesWrittenSinceStart = 0
    private var driftReference: (capture: Int, playback: Int)?
    /// Recoveries since the last cycle ran.
    private var futileRecoveryCount = 0
    private var hasFailed = false

    static let maximumFutileRecoveries = 10
    static let futileRecoveryBackOff = timespec(tv_sec: 0, tv_nsec: 10_000_000)

    /// `startingBufferFrames`: the playback buffering the first start queues (less a period), at most
    /// `playbackSettings.bufferFrames`.
    init(capture: ALSAPCM, captureSettings: ALSAStreamSettings, playback: ALSAPCM,
         playbackSettings: ALSAStreamSettings, startingBufferFrames: Int, cycle: @escaping DeviceIOCycle,
         counters: ALSADeviceCounters, realTimePriority: Int32?) throws(ALSAError) {
        self.capture = capture
        self.playback = playback
        captureFormat = captureSettings.format
        playbackFormat = playbackSettings.format
        cycleFrames = captureSettings.periodFrames
        captureBufferFrames = captureSettings.bufferFrames
        mostPrefillFrames = max(playbackSettings.bufferFrames - cycleFrames, cycleFrames)
        prefillFrames = min(max(startingBufferFrames - cycleFrames, cycleFrames), mostPrefillFrames)
        self.cycle = cycle
        self.counters = counters
        self.realTimePriority = realTimePriority
        let bufferMilliseconds = captureFormat.milliseconds(frameCount: captureSettings.bufferFrames)
        waitTimeoutMilliseconds = Int32(max(100, 4 * bufferMilliseconds))

        captureDeviceBuffer = .allocate(byteCount: captureFormat.byteCount(frameCount: cycleFrames), alignment: 16)
        playbackDeviceBuffer = .allocate(byteCount: playbackFormat.byteCount(frameCount: cycleFrames), alignment: 16)
        captureMono = .allocate(capacity: cycleFrames)
        captureMono.initialize(repeating: 0)
        playbackMono = .allocate(capacity: cycleFrames)
        playbackMono.initialize(repeating: 0)
        capturePollCount = capture.pollDescriptorCount()
        pollDescriptors = .allocate(capacity: capturePollCount + 1)
        pollDescriptors.initialize(repeating: pollfd())
        wakePipe = .allocate(capacity: 2)
        wakePipe.initialize(repeating: -1, count: 2)
        isLinked = capture.link(to: playback)

        guard pipe(wakePipe) == 0 else { throw ALSAError("create the wake-up pipe", deviceName: capture.name, code: -errno) }
        for end in 0..<2 { _ = fcntl(wakePipe[end], F_SETFL, O_NONBLOCK) }
        let filled = capture.fillPollDescriptors(UnsafeMutableBufferPointer(rebasing: pollDescriptors[0..<capturePollCount]))
        guard filled == capturePollCount else {
            throw ALSAError("read the capture poll descriptors", deviceName: capture.name, code: -22)
        }
        pollDescriptors[capturePollCount] = pollfd(fd: wakePipe[0], events: Int16(POLLIN), revents: 0)
    }

    deinit {
        if isLinked { capture.unlink() }
        for end in 0..<2 where wakePipe[end] >= 0 { close(wakePipe[end]) }
        wakePipe.deallocate()
        pollDescriptors.deallocate()
        playbackMono.deallocate()
        captureMono.deallocate()
        playbackDeviceBuffer.deallocate()
        captureDeviceBuffer.deallocate()
    }

    /// Prepares, prefills and starts both PCMs, then runs the loop on a new thread. Not real-time safe.
    func start() throws(ALSAError) {
        let result = restartStreams()
        guard result >= 0 else {
            throw ALSAError("start capture and playback together", deviceName: capture.name, code: result)
        }
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(&thread, nil, { context in
            let io = Unmanaged<ALSAIOThread>.fromOpaque(context!).takeRetainedValue()
            io.run()
            return nil
        }, context)
        guard created == 0 else {
            Unmanaged<ALSAIOThread>.fromOpaque(context).release()
            _ = capture.drop()
            _ = playback.drop()
            throw ALSAError("start the I/O thread", deviceName: capture.name, code: -created)
        }
    }

    /// Asks the loop to end, wakes it and waits at most `timeoutMilliseconds` for it; then stops both PCMs.
    /// Returns false when the thread did not end in time (it is detached and keeps what it uses alive).
    @discardableResult
    func stop(timeoutMilliseconds: Int = 2000) -> Bool {
        stopRequested.store(true, ordering: .releasing)
        var byte: UInt8 = 1
        _ = write(wakePipe[1], &byte, 1)
        var waitedMilliseconds = 0
        while !hasExited.load(ordering: .acquiring), waitedMilliseconds < timeoutMilliseconds {
            usleep(1000)
            waitedMilliseconds += 1
        }
        guard hasExited.load(ordering: .acquiring) else {
            pthread_detach(thread)
            return false
        }
        pthread_join(thread, nil)
        _ = capture.drop()
        _ = playback.drop()
        return true
    }

    // MARK: The I/O thread

    private func run() {
        if let priority = realTimePriority {
            var parameters = sched_param(sched_priority: priority)
            let isRealTime = pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
            counters.isRealTimeScheduled.store(isRealTime, ordering: .relaxed)
        }
        while !hasFailed && !stopRequested.load(ordering: .acquiring) {
            let available = capture.availableFrames()
            if available < 0 {
                recover(capture, from: Int32(available))
            } else if available > captureBufferFrames {
                recover(capture, from: -EPIPE)
            } else if available == 0 {
                waitForCapture()
            } else {
                readCapture(availableFrames: available)
            }
        }
        var cpuTime = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpuTime)
        counters.ioThreadCPUNanoseconds.store(cpuTime.tv_sec * 1_000_000_000 + cpuTime.tv_nsec, ordering: .relaxed)
        hasExited.store(true, ordering: .releasing)
    }

    private func waitForCapture() {
        if lastWakeWasEmpty {
            var backOff = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&backOff, nil)
        }
        let ready = poll(pollDescriptors.baseAddress, nfds_t(pollDescriptors.count), waitTimeoutMilliseconds)
        if ready == 0 {
            counters.waitTimeoutCount.add(1, ordering: .relaxed)
            if capture.state() != SND_PCM_STATE_RUNNING { recover(capture, from: -EPIPE) }
            return
        }
        guard ready > 0 else { return }
        lastWakeWasEmpty = true
        let events = capture.pollEvents(UnsafeMutableBufferPointer(rebasing: pollDescriptors[0..<capturePollCount]))
        if events & UInt16(POLLERR) != 0, capture.state() != SND_PCM_STATE_RUNNING {
            recover(capture, from: -EPIPE)
        }
    }

    /// Reads what is there, up to the rest of the current period; runs the cycle once the period is whole.
    /// The bytes are zeroed first: `file` capture leaves them untouched past the end of its input.
    private func readCapture(availableFrames: Int) {
        let wanted = min(availableFrames, cycleFrames - captureFillFrames)
        let destination = captureDeviceBuffer + captureFormat.byteCount(frameCount: captureFillFrames)
        destination.initializeMemory(as: UInt8.self, repeating: 0, count: captureFormat.byteCount(frameCount: wanted))
        let read = capture.read(into: destination, frameCount: wanted)
        if read == -Int(EAGAIN) { return }
        if read < 0 { return recover(capture, from: Int32(read)) }
        lastWakeWasEmpty = read == 0
        captureFillFrames += read
        framesReadSinceStart += read
        counters.capturedFrameCount.add(read, ordering: .relaxed)
        if captureFillFrames == cycleFrames {
            captureFillFrames = 0
            runOneCycle()
        }
    }

    private func runOneCycle() {
        ALSASampleConversion.mono(from: captureDeviceBuffer, format: captureFormat, frameCount: cycleFrames,
                                  into: captureMono.baseAddress!)
        playbackMono.update(repeating: 0)
        cycle(UnsafeBufferPointer(captureMono), playbackMono)
        ALSASampleConversion.interleave(playbackMono.baseAddress!, frameCount: cycleFrames, format: playbackFormat,
                                        into: playbackDeviceBuffer)
        counters.cycleCount.add(1, ordering: .relaxed)
        futileRecoveryCount = 0

        let written = playback.write(playbackDeviceBuffer, frameCount: cycleFrames)
        if written == -Int(EAGAIN) {
            counters.droppedPlaybackFrameCount.add(cycleFrames, ordering: .relaxed)
        } else if written < 0 {
            return recover(playback, from: Int32(written))
        } else {
            framesWrittenSinceStart += written
            if written < cycleFrames {
                counters.droppedPlaybackFrameCount.add(cycleFrames - written, ordering: .relaxed)
            }
        }
        measureDelaysAndDrift()
    }

    /// Publishes both delays and, once a second of audio has run since the reference point, the drift: the
    /// capture position advanced over the playback position advanced, both read at the same instant.
    private func measureDelaysAndDrift() {
        guard let captureDelay = capture.delayFrames(), let playbackDelay = playback.delayFrames() else { return }
        counters.captureDelayFrames.store(captureDelay, ordering: .relaxed)
        counters.playbackDelayFrames.store(playbackDelay, ordering: .relaxed)
        let capturePosition = framesReadSinceStart + captureDelay
        let playbackPosition = framesWrittenSinceStart - playbackDelay
        let rate = captureFormat.sampleRate
        guard let reference = driftReference else {
            if framesReadSinceStart >= rate / 2 { driftReference = (capturePosition, playbackPosition) }
            return
        }
        let captured = capturePosition - reference.capture
        let played = playbackPosition - reference.playback
        guard captured >= rate, played > 0 else { return }
        let driftPPM = (Double(captured) / Double(played) - 1) * 1_000_000
        counters.driftPPMBits.store(driftPPM.bitPattern, ordering: .relaxed)
    }

    /// Counts the xrun (or suspend), grows the prefill after a playback underrun, lets alsa-lib recover the failing
    /// PCM, then restarts both in step; backs off before a retry and gives up (recording the error) after
    /// `maximumFutileRecoveries` futile ones.
    private func recover(_ pcm: ALSAPCM, from error: Int32) {
        if futileRecoveryCount == 0 {
            counters.xrunCount.add(1, ordering: .relaxed)
            if pcm === playback, error == -EPIPE { prefillFrames = min(prefillFrames + cycleFrames, mostPrefillFrames) }
        } else {
            var backOff = Self.futileRecoveryBackOff
            nanosleep(&backOff, nil)
        }
        futileRecoveryCount += 1
        _ = pcm.recover(from: error)
        let restarted = restartStreams()
        guard futileRecoveryCount >= Self.maximumFutileRecoveries else { return }
        counters.fail(code: restarted < 0 ? restarted : error, isPlayback: pcm === playback)
        hasFailed = true
    }

    /// Drops and prepares both PCMs, queues `prefillFrames` of silence for playback and starts both (one start
    /// when linked). Returns 0 or the first alsa-lib error.
    private func restartStreams() -> Int32 {
        _ = capture.drop()
        _ = playback.drop()
        var result = capture.prepare()
        if result >= 0, !isLinked { result = playback.prepare() }
        guard result >= 0 else { return result }
        let silenceBytes = playbackFormat.byteCount(frameCount: cycleFrames)
        playbackDeviceBuffer.initializeMemory(as: UInt8.self, repeating: 0, count: silenceBytes)
        var queued = 0
        while queued < prefillFrames {
            let written = playback.write(playbackDeviceBuffer, frameCount: min(cycleFrames, prefillFrames - queued))
            guard written > 0 else { break }
            queued += written
        }
        counters.playbackQueueFrames.store(queued, ordering: .relaxed)
        framesReadSinceStart = 0
        captureFillFrames = 0
        lastWakeWasEmpty = false
        framesWrittenSinceStart = queued
        driftReference = nil
        if !isLinked {
            result = playback.start()
            guard result >= 0 else { return result }
        }
        return capture.start()
    }
}
