import Dispatch
import Synchronization

/// A change in whether the user talks while the input is muted (after Apple's muted speech activity events).
public enum MutedSpeechActivityEvent: Sendable, Hashable {
    /// Near-end speech began while muted, at this time since the unit first started (microphone clock), in seconds.
    case started(atSeconds: Double)
    /// It stopped (or the input was unmuted).
    case ended(atSeconds: Double)
}

/// Decides, period by period, when a muted user starts and stops talking, from the capture chain's near-end voice
/// decision (which the echo estimate gates, so echo alone does not count). Starts after `onsetMilliseconds` of
/// voice without a gap of `gapMilliseconds`; ends after `releaseMilliseconds` of quiet or on unmute. Real-time
/// safe (a value type).
struct MutedSpeechDetector {
    var onsetMilliseconds = 150.0
    var gapMilliseconds = 200.0
    var releaseMilliseconds = 700.0
    private(set) var isSpeaking = false
    private var talkMilliseconds = 0.0
    private var quietMilliseconds = 0.0

    /// Returns true when muted speech started this period, false when it ended, nil otherwise.
    mutating func update(nearVoiceActive: Bool, muted: Bool, periodMilliseconds: Double) -> Bool? {
        if nearVoiceActive {
            quietMilliseconds = 0
            talkMilliseconds += periodMilliseconds
        } else {
            quietMilliseconds += periodMilliseconds
            if quietMilliseconds >= gapMilliseconds, !isSpeaking { talkMilliseconds = 0 }
        }
        if !isSpeaking, muted, talkMilliseconds >= onsetMilliseconds {
            isSpeaking = true
            return true
        }
        if isSpeaking, !muted || quietMilliseconds >= releaseMilliseconds {
            isSpeaking = false
            talkMilliseconds = 0
            return false
        }
        return nil
    }
}

/// Carries muted speech events from the real-time thread (`post`: real-time safe, a ring write) to a listener
/// called on a private queue, which polls every 20 ms while a listener is set.
final class MutedSpeechNotifier: @unchecked Sendable {
    /// Each event as `frame * 2 + (started ? 1 : 0)`, `frame` counted in device frames since start.
    private let events = SPSCRing<Int>(minimumCapacity: 256, filledWith: 0)
    private let sampleRate: Int
    private let queue = DispatchQueue(label: "VoiceProcessingIO.mutedSpeech")
    private let state = Mutex<(handler: (@Sendable (MutedSpeechActivityEvent) -> Void)?, timer: DispatchSourceTimer?)>((nil, nil))

    init(sampleRate: Int) { self.sampleRate = sampleRate }

    deinit { state.withLock { $0.timer?.cancel() } }

    /// Real-time safe; an event that does not fit (256 waiting) is dropped.
    func post(started: Bool, atFrame frame: Int) {
        var code = frame * 2 + (started ? 1 : 0)
        _ = withUnsafePointer(to: &code) { events.write(UnsafeBufferPointer(start: $0, count: 1)) }
    }

    func setHandler(_ handler: (@Sendable (MutedSpeechActivityEvent) -> Void)?) {
        state.withLock { state in
            state.timer?.cancel()
            state.timer = nil
            state.handler = handler
            guard handler != nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: .milliseconds(20))
            timer.setEventHandler { [weak self] in self?.deliver() }
            timer.resume()
            state.timer = timer
        }
    }

    /// Delivers everything posted so far, then returns. Not real-time safe.
    func drain() { queue.sync { deliver() } }

    private func deliver() {
        let handler = state.withLock { $0.handler }
        var code = 0
        while withUnsafeMutablePointer(to: &code, { events.read(into: UnsafeMutableBufferPointer(start: $0, count: 1)) }) == 1 {
            let seconds = Double(code / 2) / Double(sampleRate)
            handler?(code % 2 == 1 ? .started(atSeconds: seconds) : .ended(atSeconds: seconds))
        }
    }
}
