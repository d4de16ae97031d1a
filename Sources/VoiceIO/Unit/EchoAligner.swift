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
///   reconvergence. Each such move is counted in `realignmentCount` so the canceller can start over. The lead can
///   fall short all the same, where the estimate holds a reflection that comes more than the lead after a weaker
///   direct path: the canceller then finds the echo starting before its filter, and the delay moves earlier
///   (`leadEarlierOnset`).
/// - `DriftEstimator` turns the slope of the arrival over time into a clock drift. Once known, and once it reads 20 ppm
///   or more (`agreeingClocksPPM`: clocks that agree are not slid), the applied delay glides by that drift every block,
///   so the echo stays put under the filter.
/// - The echo canceller measures what drift is left from its own filter's response sliding along its taps
///   (`trimDrift`, `EchoPathSlide`): the arrival wanders between reflections by a tenth of a millisecond, and a line
///   through it can read 50 ppm off for seconds (our drift-change d04: 300 ppm read as 236 for 6 s, the filter taking
///   10 dB off and the talker's double talk at STOI 0.85; 0.98 trimmed). From its first correction on the trimmed drift
///   is compensated, and the line's slope only when it disagrees by far in the direction the last residual pointed.
/// - The drift compensated is told back to the delay estimator (`DelayEstimator.driftPPM`), which then keeps an arrival
///   that drifts faster than its averages can follow.
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
    /// The drift as corrected by `trimDrift` (nil before its first correction), and the residual it last took.
    private var trimmedPPM: Double?
    private var lastResidualPPM: Double = 0
    /// The drift estimator's estimate, and frames since it last moved by more than `steadyEstimatePPM`.
    private var estimatedPPM: Double?
    private var framesSinceEstimateMoved = 0

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
    /// Whether the estimator's correlation shows an echo, found or not (`DelayEstimator.isEchoHeard`).
    public var isEchoHeard: Bool { estimator.isEchoHeard }
    /// Confidence of the arrival estimate, 0 ... 1.
    public var confidence: Float { estimator.confidence }
    /// Clock drift compensated now, in ppm (positive: the echo delay shrinks); nil while unknown, and while the line
    /// reads clocks that agree (under `agreeingClocksPPM`, 20 ppm) before any drift was compensated.
    public var driftPPM: Double? { compensatedPPM }

    /// Corrects the drift compensated by half of `residualPPM` (at most `largestResidualPPM`), or to the line's
    /// estimate where that agrees with the residual, a residual measured downstream: the echo canceller's filter
    /// following echo that still slides (`EchoPathSlide`). The first correction waits for an estimate that has held
    /// within `steadyEstimatePPM` for a second and is `agreeingClocksPPM` or more (clocks that agree are not slid: a
    /// hall's long tail moves the response as it converges), and for a delay above the delay line's shortest
    /// (an echo that comes sooner is not slid at all, and its residual reads zero). Real-time safe.
    public func trimDrift(byResidualPPM residualPPM: Double) {
        guard let ppm = compensatedPPM, delayFrames > DelayLine.minimumDelayFrames + 1,
              trimmedPPM != nil || (framesSinceEstimateMoved >= sampleRate && abs(ppm) >= Self.agreeingClocksPPM)
        else { return }
        trimmedPPM = ppm + Self.trimGain * min(max(residualPPM, -Self.largestResidualPPM), Self.largestResidualPPM)
        // The line's estimate where the residual points, within half of it either way, is taken whole: a filter that
        // lags a drift it is far from reads less than it is (our pathchange p08: 86 ppm for 120, a residual of 29
        // read, the line at 116 already).
        if let estimate = drift.driftPPM, residualPPM != 0,
           abs((estimate - ppm) / residualPPM - 1) <= Self.agreementShare {
            trimmedPPM = estimate
        }
        lastResidualPPM = residualPPM
    }

    private static var trimGain: Double { 0.5 }
    private static var largestResidualPPM: Double { 100 }
    /// The drift under which the clocks count as agreeing, in ppm: the line's estimate is not compensated until it
    /// reads this much or more, nor a residual taken. The arrival wanders between a room's reflections, and a line
    /// through it read 5-14 ppm for clocks that agree in a reverberant room (our r07, RT60 0.55 s): compensated, that
    /// slid the reference 1.2 frames under the filter over 15 s, which then followed a moving path through the double
    /// talk (its DT STOI 0.884; 0.923 with the delay left still). A real drift this small moves the echo by a
    /// millisecond a minute, which the filter follows and the window re-centres.
    private static var agreeingClocksPPM: Double { 20 }
    /// The first correction waits for the line's estimate to stay within this of itself for a second (at 5 the public
    /// q04, its estimate creeping from 173 to 188 for 200, took none before its double talk).
    private static var steadyEstimatePPM: Double { 10 }
    private static var agreementShare: Double { 0.5 }
    /// The line's estimate replaces the trimmed drift when it is this far from it, in the direction of a last
    /// residual of `adoptionResidualPPM` or more: a first correction from an early, wrong estimate (-115 ppm for -300)
    /// is slow to trim, measurements being few.
    private static var adoptionDistancePPM: Double { 50 }
    private static var adoptionResidualPPM: Double { 20 }

    /// Moves the delay earlier by half the lead, counted as a realignment: the echo canceller found the echo starting
    /// before its filter (`EchoOnsetWatch`), a direct path more than the lead ahead of the stronger reflection the
    /// estimate holds. Not while the arrival would then leave the window (the next search would move the delay back),
    /// nor before the first lock or below no delay, nor while the estimator's peaks do not stand out as an echo's
    /// (`isEchoHeard`): a filter learning sustained music has its response's strongest stretch anywhere, its first taps
    /// too, and held music's restarted filter took 13 dB less off (`LiveReplayTests.heldMusicLiveAndOffline`: 45 dB
    /// live, 32 moved). Real-time safe.
    public func leadEarlierOnset() {
        guard realignmentCount > 0, isEchoHeard, let arrival = estimator.fineDelayFrames else { return }
        let target = max(delayFrames - leadFrames / 2, 0)
        guard delayFrames - target > leastMoveFrames, isInsideWindow(offset: arrival - target) else { return }
        delayFrames = target
        realignmentCount += 1
    }

    /// Whether an arrival `offset` frames after the applied delay is inside the window the delay stays for
    /// [lead/4, lead + slack]. Real-time safe.
    private func isInsideWindow(offset: Double) -> Bool {
        offset >= leadFrames / 4 && offset <= leadFrames + slackFrames
    }

    /// The least move of the delay, in frames: a millisecond.
    private var leastMoveFrames: Double { Double(sampleRate) / 1000 }

    /// Feeds one block: the microphone and the *undelayed* reference, same count. Real-time safe.
    public func observe(microphone: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>) {
        let count = min(microphone.count, reference.count)
        estimator.driftPPM = compensatedPPM ?? 0
        estimator.process(reference: reference, microphone: microphone)
        // The estimator searches only while the far end plays; in a pause it keeps its last estimate, which taken
        // as fresh points would draw a flat stretch into the drift's line (a 4 s pause: 200 ppm read as 157, and
        // the echo slid under the filter by a sample and a half by the time the far end came back).
        let searched = estimator.searchCount != lastSearch
        lastSearch = estimator.searchCount
        drift.process(delayFrames: searched ? estimator.fineDelayFrames : nil, confidence: estimator.confidence,
                      atFrame: estimator.processedFrameCount)
        if let estimate = drift.driftPPM {
            if let last = estimatedPPM, abs(estimate - last) <= Self.steadyEstimatePPM {
                framesSinceEstimateMoved += count
            } else {
                estimatedPPM = estimate
                framesSinceEstimateMoved = 0
            }
            if let trimmed = trimmedPPM, abs(estimate - trimmed) > Self.adoptionDistancePPM,
               abs(lastResidualPPM) >= Self.adoptionResidualPPM, lastResidualPPM * (estimate - trimmed) > 0 {
                trimmedPPM = estimate
                lastResidualPPM = 0
            }
        }
        // Once compensated, the line is followed wherever it goes (a drift does not turn into agreeing clocks).
        let lineDriftPPM = drift.driftPPM.flatMap { ppm in
            compensatedPPM != nil || abs(ppm) >= Self.agreeingClocksPPM ? ppm : nil
        }
        compensatedPPM = trimmedPPM ?? lineDriftPPM ?? compensatedPPM
        if let ppm = compensatedPPM {
            delayFrames = max(0, delayFrames - ppm * 1e-6 * Double(count))
        }
        guard searched, let arrival = estimator.fineDelayFrames else { return }
        let offset = arrival - delayFrames
        let target = min(max(arrival - leadFrames, 0), Double(maximumDelayFrames))
        // A target within a millisecond of the applied delay (an early arrival clamped at 0) is no move.
        if realignmentCount == 0 || (!isInsideWindow(offset: offset) && abs(target - delayFrames) > leastMoveFrames) {
            delayFrames = target
            realignmentCount += 1
        }
    }
}
