import Glibc
import Synchronization

/// Echo return loss enhancement (ERLE), gated and windowed: the one measure of echo reduction the unit, the
/// offline processor and a call's meters share.
///
/// A *window* is whatever span its owner measures at a time (a 10 ms block, a device period). Each window comes
/// with its microphone and processed mean squares and a `Gate`: the owner's judgement of whether echo
/// reduction can be measured in it. A window that passes counts only once `settleWindowCount` windows in a row
/// have passed (the processed signal lags the microphone, so the window right after a near talker may still
/// carry it); the others are skipped and counted by reason. Counted windows are summed apart for processing on
/// and bypassed, so one report compares the two:
///
///     ERLE = 10·log10(Σ microphone power / Σ processed power)   over the counted windows
///
/// The live estimate (`liveDecibels`) smooths every passing window exponentially instead (about half a second
/// for 10 ms windows), for status lines and decisions in the signal chain.
///
/// `add` is real-time safe (no allocation, no lock) and has one producer thread; `report` and `liveDecibels`
/// may be read from any thread (a snapshot: its fields are each current, not necessarily of the same window).
public final class ERLEMeter: Sendable {
    /// Whether a window can measure echo reduction and, if not, why not.
    public enum Gate: Sendable, Hashable {
        /// Echo and nothing that must be kept: counts (once settled).
        case echo
        /// The loudspeaker reference (or the echo it makes) is too faint to measure against.
        case quietReference
        /// The signal chain judged the window double talk: the near voice is meant to stay.
        case doubleTalk
        /// Ground truth says a near talker is speaking (a simulated room).
        case nearTalker
        /// The window produced no processed signal to compare.
        case noOutput
    }

    /// Echo below this mean square (-60 dBFS) is too faint to measure against.
    public static let minimumEchoMeanSquare: Float = 1e-6

    /// Duration of one window, in seconds (for the report).
    public let windowSeconds: Double
    public let settleWindowCount: Int
    /// Per-window decay of the live estimate's power sums.
    public let liveSmoothing: Float
    private let processing = Tally()
    private let bypassed = Tally()
    private let skippedQuietReference = Atomic<Int>(0)
    private let skippedDoubleTalk = Atomic<Int>(0)
    private let skippedNearTalker = Atomic<Int>(0)
    private let skippedNoOutput = Atomic<Int>(0)
    private let skippedSettling = Atomic<Int>(0)
    /// Windows in a row that passed the gate (producer only).
    private let passingRun = Atomic<Int>(0)
    private let liveMicrophone = AtomicFloat(0)
    private let liveProcessed = AtomicFloat(0)
    private let live = AtomicFloat(0)

    /// Not real-time safe.
    public init(windowSeconds: Double, settleWindowCount: Int = 1, liveSmoothing: Float = 0.95) {
        self.windowSeconds = windowSeconds
        self.settleWindowCount = max(settleWindowCount, 1)
        self.liveSmoothing = liveSmoothing
    }

    /// Takes one window. Real-time safe; one producer thread.
    public func add(microphoneMeanSquare: Float, processedMeanSquare: Float, gate: Gate, bypassed isBypassed: Bool) {
        guard gate == .echo else {
            passingRun.store(0, ordering: .relaxed)
            switch gate {
            case .echo: break
            case .quietReference: skippedQuietReference.add(1, ordering: .relaxed)
            case .doubleTalk: skippedDoubleTalk.add(1, ordering: .relaxed)
            case .nearTalker: skippedNearTalker.add(1, ordering: .relaxed)
            case .noOutput: skippedNoOutput.add(1, ordering: .relaxed)
            }
            return
        }
        let microphone = liveSmoothing * liveMicrophone.load() + microphoneMeanSquare
        let processed = liveSmoothing * liveProcessed.load() + processedMeanSquare
        liveMicrophone.store(microphone)
        liveProcessed.store(processed)
        live.store(10 * log10(max(microphone, 1e-12) / max(processed, 1e-12)))
        let run = passingRun.load(ordering: .relaxed) + 1
        passingRun.store(run, ordering: .relaxed)
        guard run >= settleWindowCount else {
            skippedSettling.add(1, ordering: .relaxed)
            return
        }
        (isBypassed ? bypassed : processing).add(microphone: Double(microphoneMeanSquare),
                                                 processed: Double(processedMeanSquare))
    }

    /// The exponentially smoothed estimate over the windows that passed the gate, in dB (0 before any). Any
    /// thread; real-time safe.
    public var liveDecibels: Float { live.load() }

    /// What was counted and skipped so far. Any thread (allocates nothing).
    public var report: ERLEReport {
        ERLEReport(
            windowSeconds: windowSeconds,
            processing: processing.span(windowSeconds: windowSeconds),
            bypass: bypassed.span(windowSeconds: windowSeconds),
            skipped: ERLESkipCounts(
                quietReference: skippedQuietReference.load(ordering: .relaxed),
                doubleTalk: skippedDoubleTalk.load(ordering: .relaxed),
                nearTalker: skippedNearTalker.load(ordering: .relaxed),
                noOutput: skippedNoOutput.load(ordering: .relaxed),
                settling: skippedSettling.load(ordering: .relaxed)),
            liveDecibels: Double(live.load()))
    }

    /// One state's sums: written by the producer only, so plain loads and stores suffice.
    private final class Tally: Sendable {
        let windowCount = Atomic<Int>(0)
        let microphone = AtomicDouble(0)
        let processed = AtomicDouble(0)

        func add(microphone addedMicrophone: Double, processed addedProcessed: Double) {
            microphone.store(microphone.load() + addedMicrophone)
            processed.store(processed.load() + addedProcessed)
            windowCount.add(1, ordering: .releasing)
        }

        func span(windowSeconds: Double) -> ERLESpan {
            let count = windowCount.load(ordering: .acquiring)
            return ERLESpan(windowCount: count, seconds: Double(count) * windowSeconds,
                            microphonePower: microphone.load(), processedPower: processed.load())
        }
    }
}

/// Windows an `ERLEMeter` counted, with their power sums (mean squares summed over the windows).
public struct ERLESpan: Sendable, Hashable, Codable {
    public var windowCount: Int
    public var seconds: Double
    public var microphonePower: Double
    public var processedPower: Double
    /// 10·log10(microphone / processed); nil before any window counted.
    public var decibels: Double?

    public init(windowCount: Int = 0, seconds: Double = 0, microphonePower: Double = 0, processedPower: Double = 0) {
        self.windowCount = windowCount
        self.seconds = seconds
        self.microphonePower = microphonePower
        self.processedPower = processedPower
        decibels = windowCount > 0 && microphonePower > 0
            ? 10 * log10(microphonePower / max(processedPower, 1e-20)) : nil
    }

    /// What was counted after `earlier` (an earlier reading of the same meter): the ERLE of that stretch.
    public func since(_ earlier: ERLESpan) -> ERLESpan {
        ERLESpan(windowCount: windowCount - earlier.windowCount, seconds: seconds - earlier.seconds,
                 microphonePower: microphonePower - earlier.microphonePower,
                 processedPower: processedPower - earlier.processedPower)
    }
}

/// Windows an `ERLEMeter` skipped, by reason.
public struct ERLESkipCounts: Sendable, Hashable, Codable {
    public var quietReference = 0
    public var doubleTalk = 0
    public var nearTalker = 0
    public var noOutput = 0
    /// Passed the gate, but too soon after one that did not.
    public var settling = 0

    public init(quietReference: Int = 0, doubleTalk: Int = 0, nearTalker: Int = 0, noOutput: Int = 0, settling: Int = 0) {
        self.quietReference = quietReference
        self.doubleTalk = doubleTalk
        self.nearTalker = nearTalker
        self.noOutput = noOutput
        self.settling = settling
    }

    public var total: Int { quietReference + doubleTalk + nearTalker + noOutput + settling }
}

/// An `ERLEMeter`'s reading: counted windows with processing on and bypassed, skipped windows by reason, and
/// the live estimate.
public struct ERLEReport: Sendable, Hashable, Codable {
    public var windowSeconds: Double
    public var processing: ERLESpan
    public var bypass: ERLESpan
    public var skipped: ERLESkipCounts
    public var liveDecibels: Double

    public init(windowSeconds: Double = 0, processing: ERLESpan = .init(), bypass: ERLESpan = .init(),
                skipped: ERLESkipCounts = .init(), liveDecibels: Double = 0) {
        self.windowSeconds = windowSeconds
        self.processing = processing
        self.bypass = bypass
        self.skipped = skipped
        self.liveDecibels = liveDecibels
    }

    /// The span of one state: processing on (`bypassed` false) or bypassed.
    public func span(bypassed: Bool) -> ERLESpan { bypassed ? bypass : processing }
}
