#if canImport(Glibc)
import Glibc
#endif

/// Finds the bulk delay between the loudspeaker reference and its echo in the microphone (0 ... 500 ms) and
/// follows it as it changes.
///
/// Method: both signals are low-passed and decimated to about 4 kHz, where 64-frame partitions (16 ms) are
/// transformed. For every partition lag k the estimator keeps a running average of the cross-spectrum between
/// the microphone's current partition (Hann-windowed, see below) and the reference window k partitions ago: together they cover every
/// lag from 0 to the maximum delay, which is the cross-correlation computed partition by partition (the same
/// partitioning a frequency-domain adaptive filter uses). Every 4 partitions the cross-spectra are whitened
/// by the smoothed coherence weighting 1 / √(Pxx·Pyy), transformed back to lags and searched for the
/// strongest peak. Whitening makes the peak sharp at the direct path even in a reverberant room and keeps one
/// loud frequency band from dominating. Averaging is coherent, so uncorrelated sound in the microphone (near
/// talker, noise) only raises the floor; harmonics of a clipping speaker do not move the peak.
///
/// The microphone partition is windowed because tonal sound (sustained music) is mostly leakage in a
/// rectangular 64-frame partition: the leakage comes from the partition's cut edges, the coherence weighting
/// lifts it to the level of the partials, and the microphone's edges correlate with the reference window's
/// wherever the two line up, at whole partitions. Unwindowed, the correlation of music peaked at 0, 16, 32 …
/// 144 ms and the estimate locked there (144 ms live against a 70 ms echo; 32 ms offline against 60 ms); speech
/// put the first lock of a 166 ms hall at 240 ms for a second. Only the microphone side is windowed, so every lag
/// still sums over the same frames.
///
/// Confidence is the peak at the current lag over the floor of all lags (mean magnitude, which a long
/// reverberant tail barely lifts), mapped to 0 ... 1. The first estimate is the strongest peak, published
/// after two agreeing confident searches; afterwards the strongest peak within ±1.5 ms of the current one is
/// followed at once (drift) as long as it holds 70 % of the global peak (40 % of a global peak up to 60 ms later, a
/// reflection: see `directPathFraction`), while a peak elsewhere must win
/// three confident searches in a row before the estimate jumps (echo-path change), so the estimate does not
/// flap.
///
/// Tonal sound holds the peak low: a sustained partial or a pure tone correlates with the reference at every
/// lag, and whitening lifts its bins to the level of the rest, so they add a sinusoid over all lags to the
/// floor. Held music with a chime of two pure tones every 3 s (`scripts/app-sounds`) peaked at its echo delay
/// in every search for 30 s with a peak-to-floor ratio of 4-9, and the estimate came after 29.7 s: the confident
/// ratio (9) held for two searches only then. A peak that is the strongest at the same lag for 2 s of searches
/// in a row, at a ratio of at least 4, is published too (first estimate or jump): the averages forget in about
/// 0.8 s, so a chance peak of unrelated sound moves as they forget (music against other music without an
/// echo, once the averages hold 1.6 s of sound, held 1.0 s at most). Before the first estimate, a search under the
/// confident ratio whose peak comes up to 60 ms after the candidate, the candidate holding 40 % of it (a reflection),
/// counts for the candidate.
///
/// The estimate is the strongest arrival, usually the direct path; when a reflection is stronger, the direct
/// path comes up to a few tens of ms earlier, so a delay line should keep a margin before the estimate. Averaging only runs
/// while the reference was active within the maximum delay, so far-end silences do not erase it; the first
/// partitions are averaged plainly and later ones with a forgetting time of about 0.8 s of far-end activity.
///
/// Cost at 16 kHz: two biquad pairs per frame, two 128-point FFTs and one multiply-accumulate pass over the
/// cross-spectra per 16 ms, and one inverse FFT per partition lag every 64 ms; twice the pass and the inverse FFTs
/// while a drift is known (`driftPPM`'s turned averages).
///
/// `init` allocates everything and is not real-time safe; `process` and the properties are real-time safe.
public final class DelayEstimator {
    /// Frames per second of both inputs.
    public let sampleRate: Int
    /// Largest block `process` accepts.
    public let blockFrameCount: Int
    /// Input frames per decimated frame.
    public let decimationFactor: Int

    /// Estimated delay of the echo behind the reference, in frames at `sampleRate`; nil until confident.
    public var delayFrames: Int? { fineDelayFrames.map { Int($0.rounded()) } }
    /// The same estimate with sub-frame precision (peak interpolation), for drift tracking; nil until confident.
    public private(set) var fineDelayFrames: Double?
    /// How sure the current estimate is, 0 ... 1 (peak-to-floor ratio of the whitened cross-correlation).
    public private(set) var confidence: Float = 0
    /// The clock drift known, in ppm (positive: the echo's delay shrinks, as `DriftEstimator.driftPPM`); 0 while
    /// unknown. A second set of averages is turned by the delay it moves between partitions, so that an arrival that
    /// drifts stays one sharp peak there, and the estimate is kept while it holds there (see `keepFraction`): averaged
    /// unturned, 280 ppm moved the arrival a whole lag through the averages' memory and flattened its peak to two thirds
    /// of a pitch ghost 4 ms earlier, which the estimate jumped to (our clip-drift j02: the drift's line started over
    /// on the ghost, the double talk went uncompensated, DT STOI 0.85). The estimate itself is read from the unturned
    /// averages as before. Real-time safe; set it before `process`.
    public var driftPPM: Double = 0
    /// Frames given to `process` so far (the time base of the estimates).
    public private(set) var processedFrameCount = 0
    /// Searches run so far; it changes each time the estimate and confidence may have changed.
    public private(set) var searchCount = 0
    /// Whether the strongest peaks stand out of the floor as an echo's do, estimate or not: their peak-to-floor ratio,
    /// smoothed over about a second of searches, at least `heardPeakToFloor`, once `partitionsBeforePersistentLock`
    /// are averaged. A reverberant room whose loudspeaker stands across it from the microphone can keep every peak
    /// under the confident ratio and spread the strongest over reflections, so the first estimate waits seconds
    /// (our far-speaker f11: ratios of 6-8 from the first second, an estimate at 5.5 s); a microphone that hears no
    /// echo (a headset) keeps the ratio at 3.4-4.3 (our headset scenes, each second).
    public private(set) var isEchoHeard = false

    private static var partitionFrameCount: Int { 64 }
    private static var searchIntervalPartitions: Int { 4 }
    private static var forgettingPartitions: Double { 50.0 }
    private static var lockPeakToFloor: Float { 9 }
    /// A weaker peak counts towards a persistent lock: see `persistentLockSeconds`. Against a microphone that
    /// hears only noise, the strongest lag's ratio is about 3.7 (median; chance peaks reach 6.6).
    private static var persistentPeakToFloor: Float { 4 }
    /// How long one lag must win every search, each peak at least `persistentPeakToFloor`, to be published.
    private static var persistentLockSeconds: Double { 2.0 }
    /// Partitions averaged before weaker peaks count: the first averages, over little sound, hold chance peaks
    /// longer (music against other music held one for 2 s from the first search).
    private static var partitionsBeforePersistentLock: Double { 2 * forgettingPartitions }
    private static var confidentPeakToFloor: Float { 20 }
    private static var searchesToLock: Int { 2 }
    private static var searchesToJump: Int { 3 }
    private static var trackingToleranceSeconds: Double { 0.0015 }
    /// The current lag is kept while its peak holds this fraction of the strongest one. Voiced speech puts
    /// ghosts of the true peak one pitch period away on either side, sometimes nearly as strong.
    private static var keepFraction: Float { 0.7 }
    /// The current lag is also kept while its peak holds this fraction of a stronger one that comes up to
    /// `reflectionSpanSeconds` after it: a reflection, in a reverberant room as strong as the direct path, that
    /// outweighs it in some searches. Jumping to it cut the direct path off the filter (our reverberant r07: the
    /// direct path at 128.5 ms, a reflection at 159.8 ms at 0.6-0.7 of it and then above it for three searches; the
    /// filter, its start moved past the direct path, took 1-3 dB off for 2.5 s until the estimate came back). A
    /// path that moves later fades the old peak as the averages forget, and the jump follows.
    private static var directPathFraction: Float { 0.4 }
    private static var reflectionSpanSeconds: Double { 0.06 }
    /// The smoothed peak-to-floor ratio at or above which an echo is heard (`isEchoHeard`).
    private static var heardPeakToFloor: Float { 5.5 }
    /// Smoothing of the peak-to-floor ratio per search (about a second of searches).
    private static var heardSmoothing: Float { 1.0 / 16 }
    /// Partitions averaged before the first search: fewer give a correlation too noisy to trust its peak.
    private static var partitionsBeforeSearch: Double { 20.0 }

    private let partitionCount: Int
    /// `reflectionSpanSeconds` in decimated lags.
    private let reflectionSpanLags: Int
    /// Searches in `persistentLockSeconds`.
    private let searchesToLockPersistently: Int
    private let lagCount: Int
    private let decimatedRate: Double
    private let fft: RealFFT
    private let binCount: Int
    private let lowestBin: Int
    private let highestBin: Int
    /// The bins whose cross-spectra are averaged, four at a time: from `crossStartBin`, `crossLaneBinCount` of
    /// them (a multiple of 4), covering lowestBin ... highestBin within the spectrum. The few bins around that
    /// range are averaged too and never read.
    private let crossStartBin: Int
    private let crossLaneBinCount: Int
    private var referenceFilter: LowpassCascade
    private var microphoneFilter: LowpassCascade
    private var decimationPhase = 0

    /// The last 2 partitions of decimated reference (a window), the current partition of decimated microphone.
    private let referenceWindow: UnsafeMutablePointer<Float>
    private let microphonePartition: UnsafeMutablePointer<Float>
    /// Hann window over a microphone partition.
    private let microphoneTaper: UnsafeMutablePointer<Float>
    private var filledFrameCount = 0
    /// FFT input, and the spectra of the newest reference window and microphone partition.
    private let transformInput: UnsafeMutablePointer<Float>
    private let microphoneReal: UnsafeMutablePointer<Float>
    private let microphoneImaginary: UnsafeMutablePointer<Float>
    /// Ring of the last `partitionCount` reference window spectra; slot `newestReference` is the newest.
    private let referenceReal: UnsafeMutablePointer<Float>
    private let referenceImaginary: UnsafeMutablePointer<Float>
    private var newestReference = 0
    /// Averaged cross-spectra, one per partition lag, and averaged auto-spectra.
    private let crossReal: UnsafeMutablePointer<Float>
    private let crossImaginary: UnsafeMutablePointer<Float>
    private let referencePower: UnsafeMutablePointer<Float>
    private let microphonePower: UnsafeMutablePointer<Float>
    /// Whitened cross-correlation over all lags, the whitening per bin, and per-partition work space for the
    /// search.
    private let correlation: UnsafeMutablePointer<Float>
    /// The cross-spectra turned by the drift (`driftPPM`), and their whitened cross-correlation.
    private let turnedCrossReal: UnsafeMutablePointer<Float>
    private let turnedCrossImaginary: UnsafeMutablePointer<Float>
    private let turnedCorrelation: UnsafeMutablePointer<Float>
    /// Per bin, the averages' keep share turned by the drift's delay since the last average (real and imaginary).
    private let turnedKeepReal: UnsafeMutablePointer<Float>
    private let turnedKeepImaginary: UnsafeMutablePointer<Float>
    private let whitening: UnsafeMutablePointer<Float>
    private let weightedReal: UnsafeMutablePointer<Float>
    private let weightedImaginary: UnsafeMutablePointer<Float>
    private let lagScratch: UnsafeMutablePointer<Float>

    private var averagedPartitions = 0.0
    /// The delay the drift moved since the cross-spectra were last averaged, in decimated lags.
    private var driftSinceAverageLags = 0.0
    /// How far the turning moved the turned averages' peak ahead of the unturned one, in decimated lags: the turn each
    /// partition held since it came, weighted as the averages weigh it. 0 until a drift is known: the turned averages are
    /// then the unturned ones, not kept apart.
    private var turnedLags = 0.0
    private var smoothedPeakToFloor: Float = 0
    private var partitionsSinceReferenceActive = Int.max / 2
    private var referenceFloor: Float = 1
    private var hasHeardReference = false
    private var partitionsSinceSearch = 0
    private var candidateLag = -1
    /// Searches in a row the candidate lag has won (each peak at least `persistentPeakToFloor`), and how many of
    /// the last of them were confident (at least `lockPeakToFloor`).
    private var candidateCount = 0
    private var confidentCandidateCount = 0
    private var lockedLag: Double?

    /// `sampleRate`: 4000 ... 192000 frames per second. `blockFrameCount`: largest block `process` receives
    /// (e.g. 10 ms). `maximumDelayMilliseconds`: longest bulk delay searched. Not real-time safe.
    public init(sampleRate: Int, blockFrameCount: Int, maximumDelayMilliseconds: Double = 500) {
        precondition(sampleRate >= 4000 && sampleRate <= 192_000, "DelayEstimator sampleRate out of range")
        precondition(blockFrameCount > 0 && maximumDelayMilliseconds > 0, "DelayEstimator sizes must be positive")
        self.sampleRate = sampleRate
        self.blockFrameCount = blockFrameCount
        decimationFactor = max(1, Int((Double(sampleRate) / 4000).rounded()))
        decimatedRate = Double(sampleRate) / Double(decimationFactor)
        let partition = Self.partitionFrameCount
        let maximumLag = Int((maximumDelayMilliseconds / 1000 * decimatedRate).rounded(.up)) + 2
        partitionCount = (maximumLag + partition - 1) / partition
        lagCount = partitionCount * partition
        let searchSeconds = Double(Self.searchIntervalPartitions * partition) / decimatedRate
        searchesToLockPersistently = Int((Self.persistentLockSeconds / searchSeconds).rounded(.up))
        reflectionSpanLags = Int((Self.reflectionSpanSeconds * decimatedRate).rounded())
        fft = RealFFT(frameCount: 2 * partition)
        binCount = partition + 1
        let binHertz = decimatedRate / Double(2 * partition)
        lowestBin = max(1, Int((150 / binHertz).rounded()))
        highestBin = min(partition - 1, Int((0.4 * decimatedRate / binHertz).rounded()))
        crossLaneBinCount = (highestBin - lowestBin + 4) / 4 * 4
        crossStartBin = min(lowestBin, binCount - crossLaneBinCount)
        let cutoffHertz = 0.4 * decimatedRate
        referenceFilter = LowpassCascade(cutoffHertz: cutoffHertz, sampleRate: Double(sampleRate),
                                         enabled: decimationFactor > 1)
        microphoneFilter = referenceFilter

        referenceWindow = .zeroed(2 * partition)
        microphonePartition = .zeroed(partition)
        microphoneTaper = .zeroed(partition)
        for index in 0..<partition {
            microphoneTaper[index] = Float(0.5 - 0.5 * cos(2 * Double.pi * (Double(index) + 0.5) / Double(partition)))
        }
        transformInput = .zeroed(2 * partition)
        microphoneReal = .zeroed(binCount)
        microphoneImaginary = .zeroed(binCount)
        referenceReal = .zeroed(partitionCount * binCount)
        referenceImaginary = .zeroed(partitionCount * binCount)
        crossReal = .zeroed(partitionCount * binCount)
        crossImaginary = .zeroed(partitionCount * binCount)
        referencePower = .zeroed(binCount)
        microphonePower = .zeroed(binCount)
        correlation = .zeroed(lagCount)
        turnedCrossReal = .zeroed(partitionCount * binCount)
        turnedCrossImaginary = .zeroed(partitionCount * binCount)
        turnedCorrelation = .zeroed(lagCount)
        turnedKeepReal = .zeroed(binCount)
        turnedKeepImaginary = .zeroed(binCount)
        whitening = .zeroed(binCount)
        weightedReal = .zeroed(binCount)
        weightedImaginary = .zeroed(binCount)
        lagScratch = .zeroed(2 * partition)
    }

    deinit {
        for pointer in [referenceWindow, microphonePartition, transformInput, microphoneReal, microphoneImaginary,
                        referenceReal, referenceImaginary, crossReal, crossImaginary, referencePower,
                        microphonePower, correlation, whitening, weightedReal, weightedImaginary, lagScratch,
                        microphoneTaper, turnedCrossReal, turnedCrossImaginary, turnedCorrelation, turnedKeepReal,
                        turnedKeepImaginary] {
            pointer.deallocate()
        }
    }

    /// Feeds one block each of the reference and the microphone captured at the same instant (same frame
    /// count, at most `blockFrameCount`). Real-time safe.
    public func process(reference: UnsafeBufferPointer<Float>, microphone: UnsafeBufferPointer<Float>) {
        let count = min(reference.count, microphone.count, blockFrameCount)
        guard count > 0, let ref = reference.baseAddress, let mic = microphone.baseAddress else { return }
        let partition = Self.partitionFrameCount
        for i in 0..<count {
            let r = referenceFilter.filter(ref[i])
            let m = microphoneFilter.filter(mic[i])
            decimationPhase += 1
            guard decimationPhase == decimationFactor else { continue }
            decimationPhase = 0
            referenceWindow[partition + filledFrameCount] = r
            microphonePartition[filledFrameCount] = m
            filledFrameCount += 1
            if filledFrameCount == partition {
                filledFrameCount = 0
                processPartition()
            }
        }
        processedFrameCount += count
    }

    private func processPartition() {
        let partition = Self.partitionFrameCount
        driftSinceAverageLags -= driftPPM * 1e-6 * Double(partition)
        var referenceEnergy: Float = 0
        for i in partition..<(2 * partition) { referenceEnergy += referenceWindow[i] * referenceWindow[i] }
        referenceEnergy /= Float(partition)
        // The reference is digital: activity is an absolute floor or a clear rise over its own slow minimum. Its
        // first sound is a rise too, out of the silence before the stream: a sound there from the first frame
        // (the unit's app sounds) would set the minimum and count as background until it rose 6 dB over it.
        referenceFloor = min(referenceFloor * 1.003, max(referenceEnergy, 1e-10))
        let audible = referenceEnergy > 1e-8
        let active = audible && (referenceEnergy > 4 * referenceFloor || !hasHeardReference)
        hasHeardReference = hasHeardReference || audible
        partitionsSinceReferenceActive = active ? 0 : partitionsSinceReferenceActive + 1

        // Newest reference window spectrum into the ring.
        newestReference = (newestReference + 1) % partitionCount
        transformInput.update(from: referenceWindow, count: 2 * partition)
        let slot = newestReference * binCount
        fft.forward(transformInput, real: referenceReal + slot, imaginary: referenceImaginary + slot)
        referenceWindow.update(from: referenceWindow + partition, count: partition)

        guard partitionsSinceReferenceActive < partitionCount else { return }

        // Microphone partition, tapered, in the second half of a zero-padded frame: lags 0 ..< partition per window.
        transformInput.update(repeating: 0, count: partition)
        for index in 0..<partition { transformInput[partition + index] = microphonePartition[index] * microphoneTaper[index] }
        fft.forward(transformInput, real: microphoneReal, imaginary: microphoneImaginary)

        averagedPartitions += 1
        let weight = Float(1 / min(averagedPartitions, Self.forgettingPartitions))
        let keep = 1 - weight
        for b in 0..<binCount {
            let xr = referenceReal[slot + b], xi = referenceImaginary[slot + b]
            let yr = microphoneReal[b], yi = microphoneImaginary[b]
            referencePower[b] = keep * referencePower[b] + weight * (xr * xr + xi * xi)
            microphonePower[b] = keep * microphonePower[b] + weight * (yr * yr + yi * yi)
        }
        // An echo delayed d more lags has its cross-spectrum turned by e^(−iωd): the turned averages are turned alike.
        // Until a drift first turns them they are the unturned ones, and are only taken apart from then on.
        let isTurning = driftSinceAverageLags != 0 || turnedLags != 0
        if isTurning {
            if turnedLags == 0 {
                turnedCrossReal.update(from: crossReal, count: partitionCount * binCount)
                turnedCrossImaginary.update(from: crossImaginary, count: partitionCount * binCount)
            }
            let radiansPerLag = -2 * Double.pi * driftSinceAverageLags / Double(2 * partition)
            turnedLags = Double(keep) * (turnedLags + driftSinceAverageLags)
            driftSinceAverageLags = 0
            for b in crossStartBin..<(crossStartBin + crossLaneBinCount) {
                let angle = radiansPerLag * Double(b)
                turnedKeepReal[b] = keep * Float(cos(angle))
                turnedKeepImaginary[b] = keep * Float(sin(angle))
            }
        }
        let keepLanes = SpectrumLanes(repeating: keep), weightLanes = SpectrumLanes(repeating: weight)
        for k in 0..<partitionCount {
            let source = ((newestReference - k + partitionCount) % partitionCount) * binCount
            let target = k * binCount
            for b in stride(from: crossStartBin, to: crossStartBin + crossLaneBinCount, by: 4) {
                let xr = SpectrumLanes(loading: referenceReal + (source + b))
                let xi = SpectrumLanes(loading: referenceImaginary + (source + b))
                let yr = SpectrumLanes(loading: microphoneReal + b), yi = SpectrumLanes(loading: microphoneImaginary + b)
                // Y · conj(X)
                let real = crossReal + (target + b), imaginary = crossImaginary + (target + b)
                (keepLanes * SpectrumLanes(loading: real) + weightLanes * (yr * xr + yi * xi)).store(into: real)
                (keepLanes * SpectrumLanes(loading: imaginary) + weightLanes * (yi * xr - yr * xi)).store(into: imaginary)
                guard isTurning else { continue }
                let turnedReal = turnedCrossReal + (target + b), turnedImaginary = turnedCrossImaginary + (target + b)
                let oldReal = SpectrumLanes(loading: turnedReal), oldImaginary = SpectrumLanes(loading: turnedImaginary)
                let keepReal = SpectrumLanes(loading: turnedKeepReal + b)
                let keepImaginary = SpectrumLanes(loading: turnedKeepImaginary + b)
                (keepReal * oldReal - keepImaginary * oldImaginary + weightLanes * (yr * xr + yi * xi))
                    .store(into: turnedReal)
                (keepReal * oldImaginary + keepImaginary * oldReal + weightLanes * (yi * xr - yr * xi))
                    .store(into: turnedImaginary)
            }
        }

        partitionsSinceSearch += 1
        if partitionsSinceSearch >= Self.searchIntervalPartitions && averagedPartitions >= Self.partitionsBeforeSearch {
            partitionsSinceSearch = 0
            search()
        }
    }

    /// Whitened cross-correlation over all lags, its peak, and the lock/track/jump decision.
    private func search() {
        var meanReference: Float = 0, meanMicrophone: Float = 0
        for b in lowestBin...highestBin {
            meanReference += referencePower[b]
            meanMicrophone += microphonePower[b]
        }
        let bands = Float(highestBin - lowestBin + 1)
        let referenceRegularisation = 1e-3 * meanReference / bands + 1e-20
        let microphoneRegularisation = 1e-3 * meanMicrophone / bands + 1e-20
        // The whitening is the same for every partition: computed once. Only the bins in range are ever written
        // into `weightedReal` and `weightedImaginary`: the others stay zero from `init`.
        for b in lowestBin...highestBin {
            whitening[b] = 1 / sqrt((referencePower[b] + referenceRegularisation)
                                    * (microphonePower[b] + microphoneRegularisation))
        }
        whiten(crossReal, crossImaginary, into: correlation)
        if turnedLags != 0 { whiten(turnedCrossReal, turnedCrossImaginary, into: turnedCorrelation) }
        var peakLag = 0
        var peak: Float = 0
        var sumOfMagnitudes: Float = 0
        for lag in 0..<lagCount {
            let magnitude = abs(correlation[lag])
            sumOfMagnitudes += magnitude
            if magnitude > peak {
                peak = magnitude
                peakLag = lag
            }
        }
        searchCount += 1
        // Mean magnitude (robust to a long reverberant tail) scaled to the RMS of Gaussian noise.
        let floor = 1.25 * sumOfMagnitudes / Float(lagCount) + 1e-30
        let tolerance = Int((Self.trackingToleranceSeconds * decimatedRate).rounded())
        smoothedPeakToFloor += Self.heardSmoothing * (peak / floor - smoothedPeakToFloor)
        isEchoHeard = areWeakerPeaksTrusted && smoothedPeakToFloor >= Self.heardPeakToFloor

        if let locked = lockedLag {
            let near = strongestLag(around: Int(locked.rounded()), within: tolerance)
            if abs(correlation[near]) >= Self.keepFraction * peak || isReflection(at: peakLag, of: near, peak: peak)
                || holdsTurned(locked, within: tolerance) {
                lockedLag = Double(near) + interpolatedOffset(at: near)
                candidateCount = 0
                confidentCandidateCount = 0
                publish(floor: floor)
                return
            }
        }
        // The strongest peak is elsewhere and the current one has faded: a candidate for a jump.
        let isConfident = peak >= Self.lockPeakToFloor * floor
        let counts = isConfident || (peak >= Self.persistentPeakToFloor * floor && areWeakerPeaksTrusted)
        guard counts else {
            candidateCount = 0
            confidentCandidateCount = 0
            publish(floor: floor)
            return
        }
        // Before the first lock, a search that is not confident and whose peak is a reflection of the candidate
        // counts for the candidate (`isReflection`), as it would for a lock. Our far-speaker f11 (a loudspeaker
        // across a room of RT60 0.77 s, every ratio 5-9) had its strongest peak on the direct path, 129.8 ms, and on
        // reflections 2-47 ms later by turns: the count started over at each, and the direct path had to win 2 s of
        // searches in a row, which took until 5.3 s (3.6 s so). A confident peak stays its own candidate: counted for
        // an arrival 11 ms before it that had won the first search, the public q05's direct path (255 ms) locked the
        // estimate there (244 ms), and so did five more of our scenes. After the first lock a jump restarts the
        // filter; it needs the peak itself (our far-speaker f12, locked on a reflection 16 ms after its direct path,
        // would jump to the direct path 2 s before its double talk, and its talker's STOI fell from 0.92 to 0.62).
        let isCandidatePeak = candidateCount > 0 && abs(peakLag - candidateLag) <= tolerance
        let reflectedCandidate = isCandidatePeak || candidateCount == 0 || lockedLag != nil || isConfident ? nil
            : candidateReflected(by: peakLag, peak: peak, within: tolerance)
        if isCandidatePeak || reflectedCandidate != nil {
            candidateCount += 1
            confidentCandidateCount = isConfident ? confidentCandidateCount + 1 : 0
        } else {
            candidateCount = 1
            confidentCandidateCount = isConfident ? 1 : 0
        }
        candidateLag = reflectedCandidate ?? peakLag
        let confidentSearchesNeeded = lockedLag == nil ? Self.searchesToLock : Self.searchesToJump
        if confidentCandidateCount >= confidentSearchesNeeded || candidateCount >= searchesToLockPersistently {
            lockedLag = Double(candidateLag) + interpolatedOffset(at: candidateLag)
            candidateCount = 0
            confidentCandidateCount = 0
        }
        publish(floor: floor)
    }

    /// The drift's turned correlation over all lags (`driftPPM`): the arrival at `locked` (unturned) is there
    /// `turnedLags` later; whether it holds `keepFraction` of that correlation's strongest peak.
    private func holdsTurned(_ locked: Double, within tolerance: Int) -> Bool {
        guard turnedLags != 0 else { return false }
        var peak: Float = 0
        for lag in 0..<lagCount { peak = max(peak, abs(turnedCorrelation[lag])) }
        let held = strongestLag(around: Int((locked + turnedLags).rounded()), within: tolerance, in: turnedCorrelation)
        return abs(turnedCorrelation[held]) >= Self.keepFraction * peak
    }

    /// The whitened cross-correlation of `real`/`imaginary`'s cross-spectra over all lags, into `output`.
    private func whiten(_ real: UnsafeMutablePointer<Float>, _ imaginary: UnsafeMutablePointer<Float>,
                        into output: UnsafeMutablePointer<Float>) {
        let partition = Self.partitionFrameCount
        for k in 0..<partitionCount {
            for b in lowestBin...highestBin {
                weightedReal[b] = real[k * binCount + b] * whitening[b]
                weightedImaginary[b] = imaginary[k * binCount + b] * whitening[b]
            }
            fft.inverse(real: weightedReal, imaginary: weightedImaginary, output: lagScratch)
            (output + k * partition).update(from: lagScratch, count: partition)
        }
    }

    /// The candidate's lag (its strongest within `tolerance`) when the strongest peak, `peak` at `lag`, is a
    /// reflection of it; nil otherwise.
    private func candidateReflected(by lag: Int, peak: Float, within tolerance: Int) -> Int? {
        let candidate = strongestLag(around: candidateLag, within: tolerance)
        return isReflection(at: lag, of: candidate, peak: peak) ? candidate : nil
    }

    /// Whether the strongest peak, `peak` at `lag`, is a reflection of the arrival at `earlier`: up to
    /// `reflectionSpanLags` after it, with `earlier` holding `directPathFraction` of the peak.
    private func isReflection(at lag: Int, of earlier: Int, peak: Float) -> Bool {
        lag > earlier && lag - earlier <= reflectionSpanLags
            && abs(correlation[earlier]) >= Self.directPathFraction * peak
    }

    /// Whether `partitionsBeforePersistentLock` are averaged: peaks under the confident ratio may count from then on.
    private var areWeakerPeaksTrusted: Bool { averagedPartitions >= Self.partitionsBeforePersistentLock }

    private func strongestLag(around centre: Int, within tolerance: Int) -> Int {
        strongestLag(around: centre, within: tolerance, in: correlation)
    }

    /// The lag of `values`' largest magnitude within `tolerance` of `centre`.
    private func strongestLag(around centre: Int, within tolerance: Int, in values: UnsafeMutablePointer<Float>) -> Int {
        var best = min(lagCount - 1, max(0, centre))
        for lag in max(0, centre - tolerance)...min(lagCount - 1, centre + tolerance)
        where abs(values[lag]) > abs(values[best]) {
            best = lag
        }
        return best
    }

    private func publish(floor: Float) {
        guard let locked = lockedLag else { return }
        fineDelayFrames = locked * Double(decimationFactor)
        let lockedPeakToFloor = abs(correlation[min(lagCount - 1, max(0, Int(locked.rounded())))]) / floor
        confidence = min(1, max(0, (lockedPeakToFloor - 4) / (Self.confidentPeakToFloor - 4)))
    }

    /// Sub-lag position of a peak from a parabola through it and its neighbours, in -0.5 ... 0.5.
    private func interpolatedOffset(at lag: Int) -> Double {
        guard lag > 0 && lag < lagCount - 1 else { return 0 }
        let left = abs(correlation[lag - 1]), centre = abs(correlation[lag]), right = abs(correlation[lag + 1])
        let curvature = left - 2 * centre + right
        guard curvature < 0 else { return 0 }
        return Double(min(0.5, max(-0.5, 0.5 * (left - right) / curvature)))
    }
}

/// Fourth-order Butterworth low-pass (two biquads, direct form I) used as the anti-alias filter before
/// decimation. Real-time safe.
private struct LowpassCascade {
    private struct Section {
        let b0, b1, b2, a1, a2: Float
        var x1: Float = 0, x2: Float = 0, y1: Float = 0, y2: Float = 0

        init(cutoffHertz: Double, sampleRate: Double, q: Double) {
            let w0 = 2 * Double.pi * cutoffHertz / sampleRate
            let alpha = sin(w0) / (2 * q), c = cos(w0), a0 = 1 + alpha
            b0 = Float((1 - c) / 2 / a0); b1 = Float((1 - c) / a0); b2 = b0
            a1 = Float(-2 * c / a0); a2 = Float((1 - alpha) / a0)
        }

        mutating func filter(_ x: Float) -> Float {
            let y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2
            x2 = x1; x1 = x
            y2 = y1; y1 = y
            return y
        }
    }

    private var first: Section
    private var second: Section
    private let enabled: Bool

    init(cutoffHertz: Double, sampleRate: Double, enabled: Bool) {
        self.enabled = enabled
        first = Section(cutoffHertz: cutoffHertz, sampleRate: sampleRate, q: 0.541_196_1)
        second = Section(cutoffHertz: cutoffHertz, sampleRate: sampleRate, q: 1.306_563)
    }

    mutating func filter(_ x: Float) -> Float {
        guard enabled else { return x }
        return second.filter(first.filter(x))
    }
}
