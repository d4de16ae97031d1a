import Dispatch
import Synchronization

/// Handlers for property changes, called on a private serial queue (never the real-time thread), in the order
/// the changes were made.
final class PropertyListeners: Sendable {
    typealias Handler = @Sendable (VoiceProcessingProperty) -> Void
    private let queue = DispatchQueue(label: "VoiceProcessingIO.listeners")
    private let handlers = Mutex<[(id: Int, handler: Handler)]>([])
    private let nextID = Atomic<Int>(1)

    func add(_ handler: @escaping Handler) -> Int {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        handlers.withLock { $0.append((id, handler)) }
        return id
    }

    func remove(_ id: Int) {
        handlers.withLock { $0.removeAll { $0.id == id } }
    }

    /// Queues a notification of `property` to every handler registered now. Not real-time safe.
    func notify(_ property: VoiceProcessingProperty) {
        let current = handlers.withLock { $0.map(\.handler) }
        guard !current.isEmpty else { return }
        queue.async {
            for handler in current { handler(property) }
        }
    }

    /// Waits until every notification queued so far has been delivered.
    func drain() { queue.sync {} }
}
