/// Decides how far to delay the echo reference so the adaptive filter only has to cover the room's tail, and
/// keeps it there while the two clocks drift apart.
///
/// The unit's seam for alignment: `observe` is fed every block with the microphone and the *undelayed*
/// reference, `delayFrames` (fractional) is read before the block goes through the delay line.
///
/// - `DelayEstimator` finds the strongest arrival of the echo. The applied delay leads it by
///   `leadMilliseconds`, because the direct path can come up to a few tens of ms before a stronger reflection
///   and the filter must see both. The delay only moves when the arrival leaves the window
///   [applied + lead/4, applied + lead + slack]: the filter covers that anyway and every move costs it a
///   reconvergence. Each such move is counted in `realignmentCount` so the canceller can start over.
/// - `DriftEstimator` turns the slope of the arrival over time into a clock drift. Once known, the applied
///   delay glides by that drift every block, so the echo stays put under the filter.
///
/// `observe` is real-time safe.
public final class EchoAligner {
    public let sampleRate: Int
    public let maximumDelayMilliseconds: Double
    public let leadMilliseconds: Double
    /// The lead the unit's aligners use, in milliseconds.
    public static let defaultLeadMilliseconds: Double = 20
    /// Delay to apply to the reference now, in frames at `sampleRate` (fractional).
    public private(set) var delayFrames: Double
    /// Times the delay was moved to a new arrival (the first lock included).
    public private(set) var realignmentCount = 0

    private let estimator: DelayEstimator
    private let drift: DriftEstimator
    private let leadFrames: Double
    private let slackFrames: Double
    /// The estimator's search count at the last block.
    private var lastSearch = 0
    /// The drift being compensated: the estimator's latest, kept while it relearns after an echo-path change
    /// (the clocks did not change with the room).
    private var compensatedPPM: Double?

    /// `initialDelayFrames`: the delay to apply before the first estimate (e.g. from the device's reported
    /// latencies). Not real-time safe (allocates).
    public init(sampleRate: Int, maximumBlockFrames: Int, initialDelayFrames: Int = 0,
                maximumDelayMilliseconds: Double = 500, leadMilliseconds: Double = defaultLeadMilliseconds,
                slackMilliseconds: Double = 30) {
        self.sampleRate = sampleRate
        self.maximumDelayMilliseconds = maximumDelayMilliseconds
        self.leadMilliseconds = leadMilliseconds
        estimator = DelayEstimator(sampleRate: sampleRate, blockFrameCount: maximumBlockFrames,
                                   maximumDelayMilliseconds: maximumDelayMilliseconds)
        drift = DriftEstimator(sampleRate: sampleRate)
        leadFrames = leadMilliseconds * Double(sampleRate) / 1000
        slackFrames = slackMilliseconds * Double(sampleRate) / 1000
        delayFrames = Double(max(initialDelayFrames, 0))
    }

    /// The maximum delay in frames at `sampleRate` this aligner may ask for.
    public var maximumDelayFrames: Int { Int(maximumDelayMilliseconds * Double(sampleRate) / 1000) }
    /// The echo's strongest arrival behind the reference, in frames (nil before the first confident estimate).
    public var arrivalFrames: Double? { estimator.fineDelayFrames }
    /// Confidence of the arrival estimate, 0 ... 1.
    public var confidence: Float { estimator.confidence }
    /// Clock drift compensated now, in ppm (positive: the echo delay shrinks); nil while unknown.
    public var driftPPM: Double? { compensatedPPM }

    /// Feeds one block: the microphone and the *undelayed* reference, same count. Real-time safe.
    public func observe(microphone: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>) {
        let count = min(microphone.count, reference.count)
        estimator.process(reference: reference, microphone: microphone)
        // The estimator searches only while the far end plays; in a pause it keeps its last estimate, which taken
        // as fresh points would draw a flat stretch into the drift's line (a 4 s pause: 200 ppm read as 157, and
        // the echo slid under the filter by a sample and a half by the time the far end came back).
        let searched = estimator.searchCount != lastSearch
        lastSearch = estimator.searchCount
        drift.process(delayFrames: searched ? estimator.fineDelayFrames : nil, confidence: estimator.confidence,
                      atFrame: estimator.processedFrameCount)
        compensatedPPM = drift.driftPPM ?? compensatedPPM
        if let ppm = compensatedPPM {
            delayFrames = max(0, delayFrames - ppm * 1e-6 * Double(count))
        }
        guard searched, let arrival = estimator.fineDelayFrames else { return }
        let offset = arrival - delayFrames
        let target = min(max(arrival - leadFrames, 0), Double(maximumDelayFrames))
        let outsideWindow = offset < leadFrames / 4 || offset > leadFrames + slackFrames
        // A target within a millisecond of the applied delay (an early arrival clamped at 0) is no move.
        if realignmentCount == 0 || (outsideWindow && abs(target - delayFrames) > Double(sampleRate) / 1000) {
            delayFrames = target
            realignmentCount += 1
        }
    }
}
