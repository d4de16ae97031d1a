import Synchronization

/// Measurements the I/O thread publishes and any thread reads: relaxed atomics, one writer (the I/O thread).
final class ALSADeviceCounters: Sendable {
    let playbackDelayFrames = Atomic<Int>(0)
    let captureDelayFrames = Atomic<Int>(0)
    let driftPPMBits = Atomic<UInt64>(0)
    let xrunCount = Atomic<Int>(0)
    let isRealTimeScheduled = Atomic<Bool>(false)
    let cycleCount = Atomic<Int>(0)
    let capturedFrameCount = Atomic<Int>(0)
    let droppedPlaybackFrameCount = Atomic<Int>(0)
    let waitTimeoutCount = Atomic<Int>(0)
    let playbackQueueFrames = Atomic<Int>(0)
    let ioThreadCPUNanoseconds = Atomic<Int>(0)
    /// alsa-lib's error that ended the loop (0: none), and whether the playback PCM (not the capture) gave it.
    let failureCode = Atomic<Int32>(0)
    let failureIsPlayback = Atomic<Bool>(false)

    /// Zeroes everything before a new start. Not called while the I/O thread runs.
    func reset() {
        playbackDelayFrames.store(0, ordering: .relaxed)
        captureDelayFrames.store(0, ordering: .relaxed)
        xrunCount.store(0, ordering: .relaxed)
        cycleCount.store(0, ordering: .relaxed)
        capturedFrameCount.store(0, ordering: .relaxed)
        droppedPlaybackFrameCount.store(0, ordering: .relaxed)
        waitTimeoutCount.store(0, ordering: .relaxed)
        playbackQueueFrames.store(0, ordering: .relaxed)
        ioThreadCPUNanoseconds.store(0, ordering: .relaxed)
        driftPPMBits.store(0, ordering: .relaxed)
        isRealTimeScheduled.store(false, ordering: .relaxed)
        failureCode.store(0, ordering: .relaxed)
        failureIsPlayback.store(false, ordering: .relaxed)
    }

    /// Records the error that ended the loop. Real-time safe.
    func fail(code: Int32, isPlayback: Bool) {
        failureIsPlayback.store(isPlayback, ordering: .relaxed)
        failureCode.store(code, ordering: .releasing)
    }

    var timing: DeviceTiming {
        DeviceTiming(playbackDelayFrames: playbackDelayFrames.load(ordering: .relaxed),
                     captureDelayFrames: captureDelayFrames.load(ordering: .relaxed),
                     driftPPM: Double(bitPattern: driftPPMBits.load(ordering: .relaxed)),
                     xrunCount: xrunCount.load(ordering: .relaxed),
                     isRealTimeScheduled: isRealTimeScheduled.load(ordering: .relaxed))
    }
}
