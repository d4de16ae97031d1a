import Foundation
import Synchronization
import VoiceIO

/// Echo return loss enhancement measured where it means echo reduction: only over device periods in which
/// the microphone hears the far end's echo and no near talker, as the simulated room reports
/// (`RoomPeriodComponents`, its ground truth), kept apart for processing on and bypassed.
///
/// ERLE = Σ microphone power / Σ processed power over those periods. The processed voice lags the microphone
/// (rate conversion and the processing blocks, about 20 ms), so a period counts only when it and the
/// `settlePeriodCount - 1` before it were all echo-only: the processed audio of a counted period then holds no
/// near talker either. Double talk, where the canceller must keep the near voice, is left out by design.
///
/// `add` is real-time safe (one producer: the device thread); `span` may be read from any thread.
public final class EchoReductionMeter: Sendable {
    /// Echo-only periods counted, with their power sums.
    public struct Span: Sendable, Hashable {
        public var periodCount = 0
        public var microphonePower = 0.0
        public var processedPower = 0.0

        /// 10·log10(microphone / processed); nil before any period counted.
        public var decibels: Double? {
            guard periodCount > 0 else { return nil }
            return 10 * log10(max(microphonePower, 1e-20) / max(processedPower, 1e-20))
        }
    }

    /// Echo below this mean square (-60 dBFS) is too faint to measure against.
    public static let minimumEchoMeanSquare: Float = 1e-6
    /// The near talker counts as silent when at least this far (30 dB) below the echo.
    public static let nearTalkerSilentRatio: Float = 1e-3

    /// One state's sums: written by the device thread only, so plain loads and stores suffice.
    private final class Tally: Sendable {
        let periodCount = Atomic<Int>(0)
        let microphoneBits = Atomic<UInt64>(0)
        let processedBits = Atomic<UInt64>(0)

        func add(microphone: Double, processed: Double) {
            microphoneBits.store((Double(bitPattern: microphoneBits.load(ordering: .relaxed)) + microphone).bitPattern,
                                 ordering: .relaxed)
            processedBits.store((Double(bitPattern: processedBits.load(ordering: .relaxed)) + processed).bitPattern,
                                ordering: .relaxed)
            periodCount.add(1, ordering: .releasing)
        }

        var span: Span {
            let count = periodCount.load(ordering: .acquiring)
            return Span(periodCount: count, microphonePower: Double(bitPattern: microphoneBits.load(ordering: .relaxed)),
                        processedPower: Double(bitPattern: processedBits.load(ordering: .relaxed)))
        }
    }

    public let settlePeriodCount: Int
    private let processing = Tally()
    private let bypass = Tally()
    /// Echo-only periods in a row so far (device thread only).
    private let echoOnlyRun = Atomic<Int>(0)

    public init(settlePeriodCount: Int = 4) {
        self.settlePeriodCount = max(settlePeriodCount, 1)
    }

    /// Takes one device period: what the room says the microphone heard, and the mean square of the processed
    /// voice the unit delivered in that period (nil when it delivered none). Real-time safe.
    public func add(_ components: RoomPeriodComponents, processedMeanSquare: Float?, bypassed: Bool) {
        let isEchoOnly = components.echoMeanSquare >= Self.minimumEchoMeanSquare
            && components.nearTalkerMeanSquare <= components.echoMeanSquare * Self.nearTalkerSilentRatio
        let run = isEchoOnly ? echoOnlyRun.load(ordering: .relaxed) + 1 : 0
        echoOnlyRun.store(run, ordering: .relaxed)
        guard run >= settlePeriodCount, let processedMeanSquare else { return }
        (bypassed ? bypass : processing).add(microphone: Double(components.microphoneMeanSquare),
                                             processed: Double(processedMeanSquare))
    }

    /// The periods counted so far with processing on (`bypassed` false) or bypassed. Any thread.
    public func span(bypassed: Bool) -> Span { (bypassed ? bypass : processing).span }
}
