import Glibc

/// A thread that calls `tick` once per period of the monotonic clock (absolute deadlines, so periods do not
/// drift), until `stop`. When a tick overruns, the next deadlines are skipped rather than bunched.
/// A `RepeatingThread` whose iteration waits for the next deadline.
public final class PeriodicThread: @unchecked Sendable {
    public let periodNanoseconds: Int
    private let tick: () -> Void
    private var thread: RepeatingThread?
    /// The next deadline; set before the thread starts, then touched only by it.
    private var deadline = timespec()

    public let name: String?

    public init(name: String? = nil, periodNanoseconds: Int, tick: @escaping () -> Void) {
        self.name = name
        self.periodNanoseconds = periodNanoseconds
        self.tick = tick
    }

    /// Starts the thread; the first tick comes one period from now. Not real-time safe.
    public func start() throws(ThreadStartError) {
        guard thread == nil else { return }
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        let thread = RepeatingThread(name: name) { [unowned self] in waitAndTick() }
        self.thread = thread
        do { try thread.start() } catch {
            self.thread = nil
            throw error
        }
    }

    /// Asks the thread to finish and joins it (at most one period plus one tick).
    public func stop() {
        thread?.stop()
        thread = nil
    }

    private func waitAndTick() {
        advance(&deadline, by: periodNanoseconds)
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
        if thread?.isStopping ?? true { return }
        tick()
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        while nanoseconds(now) - nanoseconds(deadline) > periodNanoseconds { advance(&deadline, by: periodNanoseconds) }
    }

    private func advance(_ time: inout timespec, by step: Int) {
        let total = nanoseconds(time) + step
        time.tv_sec = total / 1_000_000_000
        time.tv_nsec = total % 1_000_000_000
    }

    private func nanoseconds(_ time: timespec) -> Int { time.tv_sec * 1_000_000_000 + time.tv_nsec }
}
