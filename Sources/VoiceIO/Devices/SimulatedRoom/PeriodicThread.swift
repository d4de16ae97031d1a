import Glibc
import Synchronization

/// A thread that calls `tick` once per period of the monotonic clock (absolute deadlines, so periods do not
/// drift), until `stop`. When a tick overruns, the next deadlines are skipped rather than bunched.
final class PeriodicThread: @unchecked Sendable {
    let periodNanoseconds: Int
    private let tick: () -> Void
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?

    init(periodNanoseconds: Int, tick: @escaping () -> Void) {
        self.periodNanoseconds = periodNanoseconds
        self.tick = tick
    }

    /// Starts the thread. Not real-time safe.
    func start() throws(SimulatedRoomError) {
        stopping.store(false, ordering: .relaxed)
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&handle, nil, { context in
            let owner = Unmanaged<PeriodicThread>.fromOpaque(context!).takeRetainedValue()
            owner.loop()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<PeriodicThread>.fromOpaque(context).release()
            throw .threadFailed(String(cString: strerror(result)))
        }
        thread = handle
    }

    /// Asks the thread to finish and joins it (at most one period plus one tick).
    func stop() {
        guard let thread else { return }
        stopping.store(true, ordering: .relaxed)
        pthread_join(thread, nil)
        self.thread = nil
    }

    private func loop() {
        var deadline = timespec()
        clock_gettime(CLOCK_MONOTONIC, &deadline)
        while !stopping.load(ordering: .relaxed) {
            advance(&deadline, by: periodNanoseconds)
            while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
            if stopping.load(ordering: .relaxed) { break }
            tick()
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            while nanoseconds(now) - nanoseconds(deadline) > periodNanoseconds { advance(&deadline, by: periodNanoseconds) }
        }
    }

    private func advance(_ time: inout timespec, by step: Int) {
        let total = nanoseconds(time) + step
        time.tv_sec = total / 1_000_000_000
        time.tv_nsec = total % 1_000_000_000
    }

    private func nanoseconds(_ time: timespec) -> Int { time.tv_sec * 1_000_000_000 + time.tv_nsec }
}
