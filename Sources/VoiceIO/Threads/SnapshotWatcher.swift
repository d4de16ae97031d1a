import Dispatch

/// Compares snapshots of counters on a private queue at a fixed interval, handing each new snapshot with the
/// previous one (nil the first time) to `compare`: the way counts kept by a real-time thread become log lines on
/// another thread. Not real-time safe; `start` and `stop` from one control thread.
public final class SnapshotWatcher<Snapshot>: @unchecked Sendable {
    private let intervalMilliseconds: Int
    private let take: () -> Snapshot?
    private let compare: (_ previous: Snapshot?, _ current: Snapshot) -> Void
    private let queue: DispatchQueue
    /// Touched on `queue` only.
    private var timer: DispatchSourceTimer?
    private var last: Snapshot?

    /// `take` returns nil when there is nothing to look at (e.g. its owner is gone). Both closures run on the
    /// watcher's queue.
    public init(label: String, intervalMilliseconds: Int, take: @escaping () -> Snapshot?,
                compare: @escaping (_ previous: Snapshot?, _ current: Snapshot) -> Void) {
        self.intervalMilliseconds = intervalMilliseconds
        self.take = take
        self.compare = compare
        queue = DispatchQueue(label: label)
    }

    deinit { timer?.cancel() }

    /// Starts comparing every interval; the first comparison comes one interval from now.
    public func start() {
        queue.sync {
            guard timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + .milliseconds(intervalMilliseconds),
                           repeating: .milliseconds(intervalMilliseconds), leeway: .milliseconds(intervalMilliseconds / 10))
            timer.setEventHandler { [weak self] in self?.look() }
            timer.resume()
            self.timer = timer
        }
    }

    /// Stops the timer after one last comparison (on the queue's thread, never the caller's); returns the last
    /// snapshot taken and forgets it.
    @discardableResult
    public func stop() -> Snapshot? {
        queue.async {
            self.timer?.cancel()
            self.timer = nil
            self.look()
        }
        return queue.sync {
            defer { last = nil }
            return last
        }
    }

    private func look() {
        guard let current = take() else { return }
        compare(last, current)
        last = current
    }
}
