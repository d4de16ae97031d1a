import Glibc
import Synchronization

/// A POSIX thread that calls `iteration` over and over until `stop`. Each iteration must return within a
/// bounded time (it waits with a timeout or until a deadline), so `stop` never hangs: it raises a flag the loop
/// checks between iterations and joins the thread. Serves the simulated room's clock (`PeriodicThread`) and the
/// call's network thread.
///
/// `start` and `stop` are not real-time safe; call them from one controlling thread. `isStopping` is safe from
/// any thread (the iteration may read it to skip work once a stop is asked).
public final class RepeatingThread: @unchecked Sendable {
    private let iteration: () -> Void
    /// The thread's name as the kernel shows it (/proc/PID/task/TID/comm), at most 15 bytes.
    private let name: [CChar]?
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?

    /// `iteration` runs on the new thread only. `name` (cut to 15 bytes) lets tools such as `top -H` and
    /// benchmarks reading /proc tell the thread apart.
    public init(name: String? = nil, iteration: @escaping () -> Void) {
        self.iteration = iteration
        self.name = name.map { Array($0.utf8CString.prefix(15)) + [0] }
    }

    /// Whether the thread runs (started and not yet stopped).
    public var isRunning: Bool { thread != nil }

    /// Whether `stop` has been asked and the loop is finishing.
    public var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Starts the thread; does nothing when it already runs. Not real-time safe.
    public func start() throws(ThreadStartError) {
        guard thread == nil else { return }
        stopping.store(false, ordering: .relaxed)
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&handle, nil, { context in
            let owner = Unmanaged<RepeatingThread>.fromOpaque(context!).takeRetainedValue()
            if let name = owner.name { nameCurrentThread(name) }
            while !owner.stopping.load(ordering: .acquiring) { owner.iteration() }
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<RepeatingThread>.fromOpaque(context).release()
            throw ThreadStartError(code: result)
        }
        thread = handle
    }

    /// Asks the loop to finish after its current iteration and joins the thread. Not real-time safe.
    public func stop() {
        guard let thread else { return }
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
        self.thread = nil
    }
}

/// Names the calling thread through /proc/thread-self/comm (what `pthread_setname_np` does on Linux, which the
/// Glibc module does not export). Best effort: a missing /proc leaves the name as it was.
private func nameCurrentThread(_ name: [CChar]) {
    let descriptor = open("/proc/thread-self/comm", O_WRONLY)
    guard descriptor >= 0 else { return }
    _ = name.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, strlen($0.baseAddress!)) }
    close(descriptor)
}
