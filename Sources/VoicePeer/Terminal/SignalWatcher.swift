import Dispatch
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Turns SIGINT, SIGTERM and SIGHUP into a stop request and counts SIGUSR1 and SIGUSR2, handled on a dispatch queue
/// (the default actions are disabled, so the main loop can restore the terminal and finish the files).
final class SignalWatcher: Sendable {
    private let stop = Atomic<Int32>(0)
    private let userSignals = Atomic<Int>(0)
    private let secondUserSignals = Atomic<Int>(0)
    private nonisolated(unsafe) var sources: [DispatchSourceSignal] = []

    init() {
        let queue = DispatchQueue(label: "voicepeer.signals")
        for number in [SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [self] in
                switch number {
                case SIGUSR1: userSignals.add(1, ordering: .relaxed)
                case SIGUSR2: secondUserSignals.add(1, ordering: .relaxed)
                default: stop.store(number, ordering: .relaxed)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    /// The signal that asked to stop, if any.
    var stopSignal: Int32? {
        let number = stop.load(ordering: .relaxed)
        return number == 0 ? nil : number
    }

    /// SIGUSR1s received so far.
    var userSignalCount: Int { userSignals.load(ordering: .relaxed) }

    /// SIGUSR2s received so far.
    var secondUserSignalCount: Int { secondUserSignals.load(ordering: .relaxed) }
}
