import Glibc

/// Estimates the bulk delay between the echo reference and its echo in the microphone, so the reference can be
/// delayed and the adaptive filter only has to cover the room's tail.
///
/// This is the unit's seam for delay estimation: `observe` is fed every block, `delayFrames` is read before the
/// next one. The estimator here is deliberately simple: both signals are whitened (first difference), decimated
/// to about 4 kHz, and a leaky cross-correlation is kept for every lag in 0…`maximumDelayMilliseconds`. Every
/// quarter second the strongest lag is taken when it stands well above the average and the reference was
/// active; the applied delay leads it by `leadMilliseconds` (room for the filter to catch what comes before the
/// peak) and only moves when the peak leaves the window [lead/6, lead + slack] after the applied delay, since the
/// filter covers that anyway and every move costs it a reconvergence.
///
/// `observe` is real-time safe (no allocation; about 2000 multiply-adds per decimated sample).
public final class EchoAligner {
    public let sampleRate: Int
    public let maximumDelayMilliseconds: Double
    public let leadMilliseconds: Double
    /// Delay to apply to the reference, in frames at `sampleRate`.
    public private(set) var delayFrames: Int
    /// The raw correlation peak last accepted, in frames at `sampleRate` (nil before the first estimate).
    public private(set) var peakFrames: Int?
    /// Estimates accepted so far.
    public private(set) var estimateCount = 0

    private let decimation: Int
    private let lagCount: Int
    /// Decimated reference history, newest last: `lagCount + maximumDecimatedBlock` values.
    private let referenceHistory: UnsafeMutableBufferPointer<Float>
    private let microphoneBlock: UnsafeMutableBufferPointer<Float>
    private let correlation: UnsafeMutableBufferPointer<Float>
    private let maximumDecimatedBlock: Int
    private var referenceEnergy: Float = 0
    private var previousMicrophone: Float = 0
    private var previousReference: Float = 0
    private var accumulatedMicrophone: Float = 0
    private var accumulatedReference: Float = 0
    private var accumulatedCount = 0
    private var framesSinceDecision = 0
    private var candidateFrames: Int?
    private let decisionFrames: Int
    /// How far past `leadMilliseconds` the peak may sit before the delay moves: the filter covers it anyway.
    private let slackFrames: Int
    private let blockDecay: Float

    /// `initialDelayFrames`: the delay to apply before the first estimate (e.g. from the device's reported
    /// latencies). Not real-time safe (allocates).
    public init(sampleRate: Int, maximumBlockFrames: Int, initialDelayFrames: Int = 0,
                maximumDelayMilliseconds: Double = 500, leadMilliseconds: Double = 12,
                slackMilliseconds: Double = 25) {
        self.sampleRate = sampleRate
        self.maximumDelayMilliseconds = maximumDelayMilliseconds
        self.leadMilliseconds = leadMilliseconds
        decimation = max(sampleRate / 4000, 1)
        let decimatedRate = Double(sampleRate) / Double(decimation)
        lagCount = Int(maximumDelayMilliseconds * decimatedRate / 1000) + 1
        maximumDecimatedBlock = maximumBlockFrames / decimation + 1
        referenceHistory = .allocate(capacity: lagCount + maximumDecimatedBlock)
        referenceHistory.initialize(repeating: 0)
        microphoneBlock = .allocate(capacity: maximumDecimatedBlock)
        microphoneBlock.initialize(repeating: 0)
        correlation = .allocate(capacity: lagCount)
        correlation.initialize(repeating: 0)
        delayFrames = max(initialDelayFrames, 0)
        decisionFrames = sampleRate / 4
        slackFrames = Int(slackMilliseconds * Double(sampleRate) / 1000)
        // Correlation memory of about two seconds.
        blockDecay = Float(exp(-Double(maximumBlockFrames) / (2 * Double(sampleRate))))
    }

    deinit {
        referenceHistory.deallocate()
        microphoneBlock.deallocate()
        correlation.deallocate()
    }

    /// The maximum delay in frames at `sampleRate` this aligner may ask for.
    public var maximumDelayFrames: Int { Int(maximumDelayMilliseconds * Double(sampleRate) / 1000) }

    /// Feeds one block: the microphone and the *undelayed* reference, same count. Real-time safe.
    public func observe(microphone: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>) {
        let count = min(microphone.count, reference.count)
        var produced = 0
        for index in 0..<count {
            let microphoneSample = microphone[index]
            let referenceSample = reference[index]
            accumulatedMicrophone += microphoneSample - previousMicrophone
            accumulatedReference += referenceSample - previousReference
            previousMicrophone = microphoneSample
            previousReference = referenceSample
            accumulatedCount += 1
            if accumulatedCount == decimation, produced < maximumDecimatedBlock {
                microphoneBlock[produced] = accumulatedMicrophone
                referenceHistory[lagCount + produced] = accumulatedReference
                referenceEnergy = referenceEnergy * 0.999 + accumulatedReference * accumulatedReference
                produced += 1
                accumulatedMicrophone = 0
                accumulatedReference = 0
                accumulatedCount = 0
            }
        }
        correlate(produced: produced)
        framesSinceDecision += count
        if framesSinceDecision >= decisionFrames {
            framesSinceDecision = 0
            decide()
        }
    }

    /// Adds the new decimated samples' products to every lag and shifts the reference history.
    private func correlate(produced: Int) {
        guard produced > 0 else { return }
        let history = referenceHistory.baseAddress!
        let micro = microphoneBlock.baseAddress!
        let sums = correlation.baseAddress!
        for lag in 0..<lagCount {
            var sum: Float = 0
            // Microphone sample n (history position lagCount + n) pairs with reference at n - lag.
            let base = history + (lagCount - lag)
            for n in 0..<produced { sum += micro[n] * base[n] }
            sums[lag] = sums[lag] * blockDecay + sum
        }
        (history).update(from: history + produced, count: lagCount)
    }

    private func decide() {
        guard referenceEnergy > 1e-6 else { return }
        var best = 0
        var bestValue: Float = 0
        var total: Float = 0
        for lag in 0..<lagCount {
            let value = abs(correlation[lag])
            total += value
            if value > bestValue {
                bestValue = value
                best = lag
            }
        }
        let mean = total / Float(lagCount)
        guard bestValue > 6 * mean else { return }
        let peak = best * decimation
        let tolerance = sampleRate / 500
        defer { candidateFrames = peak }
        guard let candidate = candidateFrames, abs(candidate - peak) <= tolerance else { return }
        peakFrames = peak
        estimateCount += 1
        let lead = Int(leadMilliseconds * Double(sampleRate) / 1000)
        let offset = peak - delayFrames
        if offset < lead / 6 || offset > lead + slackFrames {
            delayFrames = max(peak - lead, 0)
        }
    }
}
