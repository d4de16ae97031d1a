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
/// had spanned 6 s stays unpublished until the new line spans as long (the clocks did not change with the room). An
/// arrival that comes back onto the line from before the step, while the new one is young, hopped to another
/// reflection and back: that line is taken up again.
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

    /// How much a point of the line fades with each new one.
    private let pointDecay: Double
    private var lastPointFrame = Int.min / 2
    /// The line being fitted (nil before the first point).
    private var line: DriftLine?
    /// The line before the last step, while the line after it is young: if the arrival comes back onto it (two points
    /// in a row within half `stepSeconds`), the step was a hop to another reflection and back, and it is taken up again.
    private var setAside: DriftLine?
    private var pointsBackOnSetAside = 0
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
        pointDecay = exp(-Self.pointIntervalSeconds / memorySeconds)
    }

    /// One observation: the current delay estimate in frames (nil if none, or if it is not new since the last
    /// call: an estimate repeated through a far-end pause is no point of the line), its confidence, and the frame
    /// time it belongs to. Call once per block. Real-time safe.
    public func process(delayFrames: Double?, confidence: Float, atFrame frame: Int) {
        let interval = Int(Self.pointIntervalSeconds * Double(sampleRate))
        guard let delayFrames, confidence >= Self.minimumConfidence, frame - lastPointFrame >= interval else { return }
        lastPointFrame = frame
        let now = Double(frame) / Double(sampleRate)
        let d = delayFrames / Double(sampleRate)
        let settled = driftPPM == nil && line != nil && abs(d - lastDelaySeconds) > Self.settlingStepSeconds
        lastDelaySeconds = d
        if driftPPM != nil { setAside = nil }
        if let aside = setAside, let predicted = aside.predictedDelaySeconds(at: now) {
            pointsBackOnSetAside = abs(d - predicted) < Self.stepSeconds / 2 ? pointsBackOnSetAside + 1 : 0
            if pointsBackOnSetAside >= Self.stepPoints {
                line = aside
                line?.add(at: now, delaySeconds: d, decay: pointDecay)
                setAside = nil
                offLinePoints = 0; lastOffLineSign = 0
                updateEstimate(at: now)
                return
            }
        }
        let deviation = (line?.pointCount ?? 0) >= 4 ? line?.predictedDelaySeconds(at: now).map { d - $0 } : nil
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
            let isEstablished = driftPPM != nil && (line.map { now - $0.firstSeconds } ?? 0) >= Self.relearnSpanSeconds
            let isRelearning = driftPPM == nil && requiredSpanSeconds == Self.relearnSpanSeconds
            requiredSpanSeconds = isEstablished || isRelearning ? Self.relearnSpanSeconds : Self.minimumSpanSeconds
            if !settled, let old = line, old.pointCount >= 8 { setAside = old; pointsBackOnSetAside = 0 }
            restart()
            line = DriftLine(originSeconds: now)
            line?.add(at: now, delaySeconds: d, decay: 1)
        } else if offLineSign == 0 {
            if line == nil { line = DriftLine(originSeconds: now) }
            line?.add(at: now, delaySeconds: d, decay: pointDecay)
        }
        updateEstimate(at: now)
    }

    /// Forgets everything, e.g. after the delay line was moved by hand. Real-time safe.
    public func reset() {
        restart()
        setAside = nil
        requiredSpanSeconds = Self.minimumSpanSeconds
        lastPointFrame = Int.min / 2
    }

    private func restart() {
        line = nil
        offLinePoints = 0; lastOffLineSign = 0
        driftPPM = nil
    }

    private func updateEstimate(at now: Double) {
        guard let line, now - line.firstSeconds >= requiredSpanSeconds, line.pointCount >= 8,
              let slope = line.slope, let slopeError = line.slopeError else {
            driftPPM = nil
            return
        }
        if slopeError * 1e6 <= Self.maximumUncertaintyPPM {
            driftPPM = -slope * 1e6
        }
    }
}

/// The weighted least-squares line of delay against time `DriftEstimator` fits, each older point fading by the decay
/// given with a new one. Times are kept from `originSeconds`, so their squares stay small.
private struct DriftLine {
    let originSeconds: Double
    /// When the first point came.
    private(set) var firstSeconds = 0.0
    private(set) var pointCount = 0
    private var weight = 0.0, sumT = 0.0, sumD = 0.0, sumTT = 0.0, sumTD = 0.0, sumDD = 0.0

    init(originSeconds: Double) { self.originSeconds = originSeconds }

    mutating func add(at seconds: Double, delaySeconds d: Double, decay: Double) {
        if pointCount == 0 { firstSeconds = seconds }
        let t = seconds - originSeconds
        weight = decay * weight + 1
        sumT = decay * sumT + t
        sumD = decay * sumD + d
        sumTT = decay * sumTT + t * t
        sumTD = decay * sumTD + t * d
        sumDD = decay * sumDD + d * d
        pointCount += 1
    }

    private var timeVariance: Double? {
        guard weight > 0 else { return nil }
        let meanT = sumT / weight
        let variance = sumTT / weight - meanT * meanT
        return variance > 1e-9 ? variance : nil
    }

    /// Seconds of delay per second (negative: the delay shrinks).
    var slope: Double? {
        guard let timeVariance else { return nil }
        return (sumTD / weight - sumT / weight * (sumD / weight)) / timeVariance
    }

    func predictedDelaySeconds(at seconds: Double) -> Double? {
        guard let slope else { return nil }
        return sumD / weight + slope * (seconds - originSeconds - sumT / weight)
    }

    /// The slope's standard error, from the points' scatter about the line.
    var slopeError: Double? {
        guard let timeVariance else { return nil }
        let meanT = sumT / weight, meanD = sumD / weight
        let covariance = sumTD / weight - meanT * meanD
        let residualVariance = max(0, sumDD / weight - meanD * meanD - covariance * covariance / timeVariance)
        return sqrt(residualVariance / (timeVariance * max(1, weight - 2)))
    }
}
