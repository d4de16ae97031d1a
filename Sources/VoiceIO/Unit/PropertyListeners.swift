import Dispatch
import Synchronization

/// Handlers for property changes, called on a private serial queue (never the real-time thread), in the order
/// of each property's latest change.
///
/// ```
/// setter (any thread, the real-time one too) ── stamp = sequence + 1 ──► stamps[property]   (atomics only)
///                                                                              │ swept every 10 ms, and by drain
/// private queue ◄── handlers(property), ordered by stamp ◄─────────────────────┘
/// ```
/// `notify` takes no lock and allocates nothing: it stores a sequence number in the property's slot. Changes of
/// one property between two sweeps are heard once (the handler reads the current value). Without handlers,
/// changes are not kept.
final class PropertyListeners: @unchecked Sendable {
    typealias Handler = @Sendable (VoiceProcessingProperty) -> Void
    /// How often the queue looks for changes while handlers exist, in milliseconds.
    static let sweepMilliseconds = 10
    private let queue = DispatchQueue(label: "VoiceProcessingIO.listeners")
    private let handlers = Mutex<[(id: Int, handler: Handler)]>([])
    private let handlerCount = Atomic<Int>(0)
    private let nextID = Atomic<Int>(1)
    private let sequence = Atomic<UInt64>(0)
    /// Per property (by `slot`): the sequence number of its latest unheard change, 0 when none.
    private let stamps: InlineArray<16, Atomic<UInt64>> = InlineArray { _ in Atomic<UInt64>(0) }
    /// Started with the first handler; touched on `queue` only afterwards.
    private var timer: DispatchSourceTimer?

    deinit { timer?.cancel() }

    /// Not real-time safe.
    func add(_ handler: @escaping Handler) -> Int {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        handlers.withLock { $0.append((id, handler)) }
        handlerCount.add(1, ordering: .releasing)
        queue.sync { startSweeping() }
        return id
    }

    /// Not real-time safe.
    func remove(_ id: Int) {
        let removed = handlers.withLock { list in
            let before = list.count
            list.removeAll { $0.id == id }
            return before - list.count
        }
        handlerCount.subtract(removed, ordering: .releasing)
    }

    /// Records a change of `property` for the handlers. Real-time safe: atomics only, no lock, no allocation.
    func notify(_ property: VoiceProcessingProperty) {
        guard handlerCount.load(ordering: .acquiring) > 0 else { return }
        let stamp = sequence.wrappingAdd(1, ordering: .relaxed).newValue
        stamps[property.slot].store(stamp, ordering: .releasing)
    }

    /// Delivers every change recorded so far, and waits until it is delivered. Not real-time safe.
    func drain() {
        queue.async { self.sweep() }    // async: handlers run on the queue's thread, never the caller's
        queue.sync {}
    }

    private func startSweeping() {
        guard timer == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(Self.sweepMilliseconds),
                       repeating: .milliseconds(Self.sweepMilliseconds), leeway: .milliseconds(5))
        timer.setEventHandler { [weak self] in self?.sweep() }
        timer.resume()
        self.timer = timer
    }

    /// On `queue`: takes the pending changes and calls the handlers, oldest change first.
    private func sweep() {
        var changes: [(stamp: UInt64, property: VoiceProcessingProperty)] = []
        for property in VoiceProcessingProperty.allCases {
            let stamp = stamps[property.slot].exchange(0, ordering: .acquiring)
            if stamp != 0 { changes.append((stamp, property)) }
        }
        guard !changes.isEmpty else { return }
        let current = handlers.withLock { $0.map(\.handler) }
        for change in changes.sorted(by: { $0.stamp < $1.stamp }) {
            for handler in current { handler(change.property) }
        }
    }
}

extension VoiceProcessingProperty {
    /// The property's slot in `PropertyListeners`: a switch, so that it allocates nothing even unoptimised.
    var slot: Int {
        switch self {
        case .bypassVoiceProcessing: 0
        case .enableAGC: 1
        case .duckOthers: 2
        case .duckingLevel: 3
        case .duckingMode: 4
        case .muteOutput: 5
        case .inputMuted: 6
        case .deviceFormat: 7
        }
    }
}
