#if canImport(Glibc)
import Glibc
#endif

/// Estimates the clock drift between the loudspeaker reference and the microphone from the slope of the
/// echo delay over time.
///
/// Feed it the sub-frame delay estimate (`DelayEstimator.fineDelayFrames`) once per block. Every quarter
/// second a confident estimate becomes a point of a weighted least-squares line, delay against time, whose
/// older points fade with a time constant of `memorySeconds`; the slope is the drift. A point more than
/// 2 ms off the line is an echo-path change, not drift: the line starts again from it.
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
    private static var maximumUncertaintyPPM: Double { 25.0 }
    private static var jumpSeconds: Double { 0.002 }
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
    private var lastDelaySeconds = 0.0

    /// `sampleRate`: frames per second of `atFrame` and the delays. `memorySeconds`: how long the line
    /// remembers (longer is steadier, shorter follows changes of drift faster).
    public init(sampleRate: Int, memorySeconds: Double = 30) {
        precondition(sampleRate > 0 && memorySeconds > 0, "DriftEstimator parameters must be positive")
        self.sampleRate = sampleRate
        self.memorySeconds = memorySeconds
    }

    /// One observation: the current delay estimate in frames (nil if none), its confidence, and the frame
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
        if settled || pointCount >= 4 && predictedDelaySeconds(at: t).map({ abs(d - $0) > Self.jumpSeconds }) == true {
            restart()
            originSeconds = Double(frame) / rate
            addPoint(t: 0, d: d, decay: 1)
        } else {
            addPoint(t: t, d: d, decay: exp(-Self.pointIntervalSeconds / memorySeconds))
        }
        updateEstimate(latestSeconds: t)
    }

    /// Forgets everything, e.g. after the delay line was moved by hand. Real-time safe.
    public func reset() {
        restart()
        originSeconds = nil
        lastPointFrame = Int.min / 2
    }

    private func restart() {
        weight = 0; sumT = 0; sumD = 0; sumTT = 0; sumTD = 0; sumDD = 0
        pointCount = 0
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
        guard latestSeconds - firstSeconds >= Self.minimumSpanSeconds, pointCount >= 8, let line else {
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
