import Synchronization

/// What the network thread, the audio thread and readers of statistics share: the published statistics
/// (behind a lock no real-time code takes), the capture overflow count (an atomic the audio thread bumps) and
/// when the audio thread last queued captured voice (which the network thread paces its sleep on).
final class SharedCallState: Sendable {
    let published = Mutex(CallStatistics())
    let captureOverflowFrames = Atomic<Int>(0)
    /// CLOCK_MONOTONIC nanoseconds of the latest `sendCaptured` (0 before the first).
    let lastCaptureNanoseconds = Atomic<Int64>(0)
}
