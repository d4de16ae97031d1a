import Synchronization

/// What the network thread, the audio thread and readers of statistics share: the published statistics
/// (behind a lock no real-time code takes) and the capture overflow count (an atomic the audio thread bumps).
final class SharedCallState: Sendable {
    let published = Mutex(CallStatistics())
    let captureOverflowFrames = Atomic<Int>(0)
}
