#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A POSIX thread that runs `iteration` over and over until `stop`; each iteration must return within a
/// bounded time (it waits on the socket with a timeout), so `stop` never hangs.
final class NetworkThread: @unchecked Sendable {
    private let iteration: () -> Void
    private let stopping = Atomic<Bool>(false)
    private var thread: pthread_t?

    init(iteration: @escaping () -> Void) {
        self.iteration = iteration
    }

    var isRunning: Bool { thread != nil }

    /// Starts the thread. Not real-time safe.
    func start() throws(CallError) {
        guard thread == nil else { return }
        stopping.store(false, ordering: .relaxed)
        var handle = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let result = pthread_create(&handle, nil, { context in
            let owner = Unmanaged<NetworkThread>.fromOpaque(context!).takeRetainedValue()
            while !owner.stopping.load(ordering: .acquiring) { owner.iteration() }
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<NetworkThread>.fromOpaque(context).release()
            throw .threadFailed(code: result)
        }
        thread = handle
    }

    /// Asks the loop to finish after its current iteration and joins it.
    func stop() {
        guard let thread else { return }
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
        self.thread = nil
    }
}
