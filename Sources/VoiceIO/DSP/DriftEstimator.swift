#if canImport(Glibc)
import Glibc
#endif

/// Estimates the clock drift between the loudspeaker reference and the microphone from the slope of the
/// echo delay over time.
///
/// Feed it the sub-frame delay estimate (`DelayEstimator.fineDelayFrames`) once per block. Every quarter
/// second a confident estimate becomes a point of a weighted least-squares line, delay against time, whose
/// older points fade with a time constant of `memorySeconds`; the slope is the drift. A point more than
/// 2 ms off the line, or two in a row more than 0.8 ms off on the same side, are an echo-path change, not drift: the
/// line starts again from there (a single point that far off is left out). After a change the drift of a line that
/// had spanned 6 s stays unpublished until the new line spans as long (the clocks did not change with the room).
///
/// Sign: a positive `driftPPM` means the loudspeaker's clock runs faster than the microphone's by that many
/// parts per million, so the echo delay shrinks by ppm·10⁻⁶ seconds per second; to stay aligned the reference
/// must be resampled from R to R / (1 + ppm·10⁻⁶). (The yardstick's `drift_ppm` has the same sign.)
///
/// `init` is not real-time safe in principle (it is trivial); `process` and the properties are real-time safe.
public final class DriftEstimator {
    /// Frames per second of the time base and the delays.
    public let sampleRate: Int
    /// Time constant of the line's memory.
    public let memorySeconds: Double

    /// Drift in parts per million (positive: the delay shrinks); nil until the line spans `minimumSpanSeconds`
    /// and its slope is known within ±`maximumUncertaintyPPM`.
    public private(set) var driftPPM: Double?

    private static var pointIntervalSeconds: Double { 0.25 }
    private static var minimumConfidence: Float { 0.3 }
    private static var minimumSpanSeconds: Double { 2.0 }
    /// The span a line started after an echo-path change needs before it replaces the drift known before the change
    /// (the clocks did not change with the room; the aligner compensates the old drift meanwhile). The arrival of a
    /// moved path wanders between reflections of similar strength for seconds: a young line through it read -110
    /// ppm for clocks that agree (our dt-change scene t05).
    private static var relearnSpanSeconds: Double { 6 }
    private static var maximumUncertaintyPPM: Double { 25.0 }
    private static var jumpSeconds: Double { 0.002 }
    /// Off the line by more than this for `stepPoints` points in a row, on the same side: a step (a moved path).
    private static var stepSeconds: Double { 0.0008 }
    private static var stepPoints: Int { 2 }
    /// Largest change between consecutive points of a line not yet trusted that is still drift: 0.25 s at
    /// 1000 ppm moves the delay by 0.25 ms. A bigger step while the line is young is the delay estimator's first
    /// lock settling on a neighbouring arrival (about a millisecond away, under `jumpSeconds`); a line through
    /// both would read it as a steep drift of the wrong sign and keep it for its whole memory.
    private static var settlingStepSeconds: Double { 0.0004 }

    private var lastPointFrame = Int.min / 2
    private var originSeconds: Double?
    private var firstSeconds = 0.0
    private var weight = 0.0, sumT = 0.0, sumD = 0.0, sumTT = 0.0, sumTD = 0.0, sumDD = 0.0
    private var pointCount = 0
    /// The span the line needs before its drift is published.
    private var requiredSpanSeconds = minimumSpanSeconds
    private var lastDelaySeconds = 0.0
    /// Points in a row off the line by more than `stepSeconds`, and the side of the last (0: on the line).
    private var offLinePoints = 0, lastOffLineSign = 0

    /// `sampleRate`: frames per second of `atFrame` and the delays. `memorySeconds`: how long the line
    /// remembers (longer is steadier, shorter follows changes of drift faster).
    public init(sampleRate: Int, memorySeconds: Double = 30) {
        precondition(sampleRate > 0 && memorySeconds > 0, "DriftEstimator parameters must be positive")
        self.sampleRate = sampleRate
        self.memorySeconds = memorySeconds
    }

    /// One observation: the current delay estimate in frames (nil if none, or if it is not new since the last
    /// call: an estimate repeated through a far-end pause is no point of the line), its confidence, and the frame
    /// time it belongs to. Call once per block. Real-time safe.
    public func process(delayFrames: Double?, confidence: Float, atFrame frame: Int) {
        let interval = Int(Self.pointIntervalSeconds * Double(sampleRate))
        guard let delayFrames, confidence >= Self.minimumConfidence, frame - lastPointFrame >= interval else { return }
        lastPointFrame = frame
        let rate = Double(sampleRate)
        let origin = originSeconds ?? Double(frame) / rate
        if originSeconds == nil { originSeconds = origin }
        let t = Double(frame) / rate - origin
        let d = delayFrames / rate
        let settled = driftPPM == nil && pointCount > 0 && abs(d - lastDelaySeconds) > Self.settlingStepSeconds
        lastDelaySeconds = d
        let deviation = pointCount >= 4 ? predictedDelaySeconds(at: t).map { d - $0 } : nil
        let isJump = deviation.map { abs($0) > Self.jumpSeconds } == true
        // A smaller step that stays is a path change too (a path moved by a millisecond or two); drawn into the line
        // it bent the line to -60 ppm (t03, a 1 ms step) or -110 ppm (t14, 1.8 ms) for clocks that agree. A single
        // point that far off is held out of the line.
        let offLineSign = deviation.map { abs($0) > Self.stepSeconds ? ($0 > 0 ? 1 : -1) : 0 } ?? 0
        offLinePoints = offLineSign == 0 ? 0 : offLineSign == lastOffLineSign ? offLinePoints + 1 : 1
        lastOffLineSign = offLineSign
        if settled || isJump || offLinePoints >= Self.stepPoints {
            // A drift from a line that spanned the relearning span itself (or one still kept) stays until the new
            // line spans it too.
            let isEstablished = driftPPM != nil && t - firstSeconds >= Self.relearnSpanSeconds
            let isRelearning = driftPPM == nil && requiredSpanSeconds == Self.relearnSpanSeconds
            requiredSpanSeconds = isEstablished || isRelearning ? Self.relearnSpanSeconds : Self.minimumSpanSeconds
            restart()
            originSeconds = Double(frame) / rate
            addPoint(t: 0, d: d, decay: 1)
        } else if offLineSign == 0 {
            addPoint(t: t, d: d, decay: exp(-Self.pointIntervalSeconds / memorySeconds))
        }
        updateEstimate(latestSeconds: t)
    }

    /// Forgets everything, e.g. after the delay line was moved by hand. Real-time safe.
    public func reset() {
        restart()
        requiredSpanSeconds = Self.minimumSpanSeconds
        originSeconds = nil
        lastPointFrame = Int.min / 2
    }

    private func restart() {
        weight = 0; sumT = 0; sumD = 0; sumTT = 0; sumTD = 0; sumDD = 0
        pointCount = 0
        offLinePoints = 0; lastOffLineSign = 0
        driftPPM = nil
    }

    private func addPoint(t: Double, d: Double, decay: Double) {
        if pointCount == 0 { firstSeconds = t }
        weight = decay * weight + 1
        sumT = decay * sumT + t
        sumD = decay * sumD + d
        sumTT = decay * sumTT + t * t
        sumTD = decay * sumTD + t * d
        sumDD = decay * sumDD + d * d
        pointCount += 1
    }

    private var line: (slope: Double, intercept: Double, timeVariance: Double)? {
        guard weight > 0 else { return nil }
        let meanT = sumT / weight, meanD = sumD / weight
        let varianceT = sumTT / weight - meanT * meanT
        guard varianceT > 1e-9 else { return nil }
        let slope = (sumTD / weight - meanT * meanD) / varianceT
        return (slope, meanD - slope * meanT, varianceT)
    }

    private func predictedDelaySeconds(at t: Double) -> Double? {
        guard let line else { return nil }
        return line.intercept + line.slope * t
    }

    private func updateEstimate(latestSeconds: Double) {
        guard latestSeconds - firstSeconds >= requiredSpanSeconds, pointCount >= 8, let line else {
            driftPPM = nil
            return
        }
        let meanD = sumD / weight, meanT = sumT / weight
        let covariance = sumTD / weight - meanT * meanD
        let residualVariance = max(0, sumDD / weight - meanD * meanD - covariance * covariance / line.timeVariance)
        let slopeError = sqrt(residualVariance / (line.timeVariance * max(1, weight - 2)))
        if slopeError * 1e6 <= Self.maximumUncertaintyPPM {
            driftPPM = -line.slope * 1e6
        }
    }
}
