#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VoiceIO

/// Collects the unit's muted speech events (delivered on the unit's queue) for the main thread to print and
/// record: `muted speech started at T s` / `ended at T s`, T on the unit's microphone clock.
final class MutedSpeechLog: Sendable {
    private let pending = Mutex<[MutedSpeechActivityEvent]>([])
    private let all = Mutex<[MutedSpeechActivityEvent]>([])

    init(unit: VoiceProcessingIO) {
        unit.setMutedSpeechActivityListener { [weak self] event in
            self?.pending.withLock { $0.append(event) }
            self?.all.withLock { $0.append(event) }
        }
    }

    /// Events not taken yet, oldest first.
    func take() -> [MutedSpeechActivityEvent] { pending.withLock { events in defer { events = [] }; return events } }

    /// How many times muted speech started so far.
    var startCount: Int {
        all.withLock { $0.filter { if case .started = $0 { true } else { false } }.count }
    }

    static func text(_ event: MutedSpeechActivityEvent) -> String {
        switch event {
        case .started(let seconds): String(cFormat: "muted speech started at %.2f s", seconds)
        case .ended(let seconds): String(cFormat: "muted speech ended at %.2f s", seconds)
        }
    }

    static func name(_ event: MutedSpeechActivityEvent) -> String {
        switch event {
        case .started: "muted speech started"
        case .ended: "muted speech ended"
        }
    }

    static func seconds(_ event: MutedSpeechActivityEvent) -> Double {
        switch event {
        case .started(let seconds), .ended(let seconds): seconds
        }
    }
}
