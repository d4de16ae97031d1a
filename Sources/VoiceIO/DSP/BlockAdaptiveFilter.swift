import Glibc

/// A two-path multidelay block frequency-domain adaptive filter (MDF) in Swift, after Valin's "On adjusting the
/// learning rate in frequency domain echo cancellation with double-talk" (2007), the algorithm behind speexdsp's
/// echo canceller: the same DC notch, 0.9 pre-emphasis and de-emphasis, per-bin learning rate from the
/// residual-to-error ratio and the leak estimate, proportional step per partition, and the alternately constrained
/// partitions (partition 0 and one rotating one per block). Where speexdsp holds adaptation after a block with a
/// clipped microphone sample, the clipped samples are left out of the error the filters learn from (a microphone
/// that clips on every loud echo peak would otherwise hold the filter most of the time). Three additions: while the
/// far end plays alone the adapted rate keeps a floor at the start-up rate (`keepsStartupStep`), so sustained music
/// does not stall it; a shadow, a third set of weights learning at a fixed normalised step, takes over when the
/// adapted filter has lost the path (`restartedFromShadow`), and its echo estimate tells the start-up rate how loud
/// the echo is (a hot microphone's, louder than the reference); and the reference is shaped by the loudspeaker's
/// saturation, learned while the far end plays alone (`LoudspeakerSaturation`), before any of the three filters
/// sees it. A restart can keep the path learned aside (`resetKeepingPreviousPath`), to take it back moved in time when
/// the echo came back whole but later or sooner (`EchoShiftFinder`).
///
/// Samples are in Int16 units (full scale 32768) as Float. Each partition keeps the taps of a tuned block (10 ms:
/// `partitionFrameCount`), and the transform (`MixedRadixRealFFT`) spans two partitions, whatever the block: at a call's
/// 5 ms blocks the filter adapts every block on the block's error, but its partitions and spectra are those of 10 ms
/// blocks, partition j filtering the reference spectrum of 2j blocks back (the generalized multidelay filter of
/// Moulines, Ait Amrane and Grenier, 1995). With 5 ms partitions (twice as many, half the bins), the filter
/// alone (no suppression, no noise suppression) left 1.5-3 dB more echo in double talk than at 10 ms blocks on every
/// one of ten of our scenes, and 2-4 dB more late in the far end's talk: the per-bin normalisation decouples fewer,
/// coarser bins less well. A partition two blocks long is constrained (its taps past `partitionFrameCount` cut) in
/// every second block, every partition, besides partition 0 and the rotating one in each: the block falls in the
/// transform's linear part, so a partition left unconstrained until its turn in the rotation (19 blocks in a 200 ms
/// filter) learns the next partition's echo in its spare taps, and its turn threw that away. On white noise through a
/// room the 5 ms filter reached 20.5 dB at 8 s against 42.4 at 10 ms blocks, its two paths swapping back at every
/// turn; now 37.1. The learning rate reads the error and the echo over a tuned block (`MDFLearningRate`'s
/// `blocksPerTunedBlock`), without which the faster filter was found misadjusted under a talker (our louder-move v07).
/// The filter can grow up to its longest length (`extend(toPartitions:)`), for a room that rings past it: the added
/// partitions start from zero.
///
/// `init` allocates everything; `process` and `reset` are real-time safe (no allocation, no locks).
final class BlockAdaptiveFilter {
    let frameCount: Int
    /// Taps per partition: the frames of a tuned block (10 ms), a whole number of blocks (`frameCount` at 10 ms blocks,
    /// two blocks at 5 ms).
    let partitionFrameCount: Int
    /// Blocks per partition: how many blocks apart the reference spectra of neighbouring partitions are.
    private let blocksPerPartition: Int
    /// Reference spectra the rings hold: enough for the longest filter's last partition and last block's adaptation.
    private let ringCount: Int
    /// Partitions in use (`extend(toPartitions:)` raises it, up to `longestPartitionCount`).
    private(set) var partitionCount: Int
    /// Partitions allocated: the longest the filter can grow to.
    let longestPartitionCount: Int
    let windowFrameCount: Int
    let binCount: Int
    /// Bins rounded up to whole SIMD8 lanes.
    private let laneBinCount: Int
    private let fft: MixedRadixRealFFT

    // Time-domain buffers.
    private let referenceWindow: UnsafeMutablePointer<Float>   // pre-emphasised reference, newest block last
    private let nearBlock: UnsafeMutablePointer<Float>         // notched, pre-emphasised microphone
    private let foregroundEcho: UnsafeMutablePointer<Float>
    private let backgroundEcho: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>           // windowFrameCount
    private let errorWindow: UnsafeMutablePointer<Float>       // windowFrameCount: zeros then the background error
    /// Per frame of the block, 1 where the microphone's sample is trusted and 0 where it clipped (see `process`).
    private let trustedMicrophone: UnsafeMutablePointer<Float>

    // Spectra: split real / imaginary, laneBinCount each.
    private let referenceSpectra: UnsafeMutablePointer<Float>  // ringCount × 2 × laneBinCount, a ring
    private var newestSpectrum = 0
    private let background: UnsafeMutablePointer<Float>        // longestPartitionCount × 2 × laneBinCount
    private let foreground: UnsafeMutablePointer<Float>
    private let accumulator: UnsafeMutablePointer<Float>       // 2 × laneBinCount
    private let errorSpectrum: UnsafeMutablePointer<Float>     // 2 × laneBinCount

    // The loudspeaker's saturation ahead of the filter, and what it learns from (see `learnSaturation`).
    private(set) var saturation = LoudspeakerSaturation()
    private let derivativeWindow: UnsafeMutablePointer<Float>  // pre-emphasised ∂f/∂c of the reference
    private let derivativeSpectra: UnsafeMutablePointer<Float> // a ring beside `referenceSpectra`
    private let derivativeEcho: UnsafeMutablePointer<Float>    // the foreground's response to ∂f/∂c
    private var previousDerivative: Float = 0

    /// The per-bin step, from this block's power spectra (`MDFLearningRate`).
    private let rate: MDFLearningRate
    private let partitionWeight: UnsafeMutablePointer<Float>
    private let crossfade: UnsafeMutablePointer<Float>         // rising half of a Hann window over 2 blocks

    // The shadow (see `judgeShadow`).
    private let shadow: UnsafeMutablePointer<Float>            // longestPartitionCount × 2 × laneBinCount
    private let shadowEcho: UnsafeMutablePointer<Float>        // frameCount
    private let shadowErrorWindow: UnsafeMutablePointer<Float> // windowFrameCount: zeros then the shadow's error
    private let shadowErrorSpectrum: UnsafeMutablePointer<Float>
    private let shadowStepPerBin: UnsafeMutablePointer<Float>
    /// The start-up profile of `partitionWeight` (about ten times more step for the first partition than the last).
    private let shadowPartitionWeight: UnsafeMutablePointer<Float>
    private let weightSnapshot: UnsafeMutablePointer<Float>      // longestPartitionCount × 2 × laneBinCount
    private let shiftTaps: UnsafeMutablePointer<Float>           // longestPartitionCount × partitionFrameCount (`shift`)
    private let previousPath: UnsafeMutablePointer<Float>        // longestPartitionCount × 2 × laneBinCount
    private let previousReferenceSpectra: UnsafeMutablePointer<Float> // laid out as `referenceSpectra`
    private let previousPathEcho: UnsafeMutablePointer<Float>    // frameCount
    private var shadowErrorSmoothed: Float = 0, foregroundErrorSmoothed: Float = 0, nearSmoothed: Float = 0
    private var shadowWinningBlocks = 0
    /// Finds a path that moved where the shadow has not won by its margin (see `judgeShadow`).
    private var lostPathRun: LostPathRun
    /// Finds a path that moved under a talker heard (see `judgeShadow`).
    private var talkerPathMove: TalkerPathMove
    private let blockRate: BlockRate
    /// Whether the last block replaced the adapted weights with the shadow's. Real-time safe.
    private(set) var restartedFromShadow = false
    /// Whether that restart was for a path that moved under a talker heard (`TalkerPathMove`). Real-time safe.
    private(set) var restartedUnderTalker = false
    /// Whether the shadow leads a foreground that lost the path, before it takes over (see `judgeShadow`). Real-time
    /// safe.
    private(set) var isShadowLeading = false
    /// Whether the last block's microphone clipped (a sample at `clippedMagnitude` or beyond): its error there is the
    /// clipping's, which no filter learns from. Real-time safe.
    private(set) var isMicrophoneClipped = false
    /// Microphone power over the shadow's error power above which the shadow is found cancelling (6 dB).
    private static var shadowFoundEchoRatio: Float { 4 }
    /// The shadow's step: a fixed share of the normalised step, never adapted.
    private static var shadowStep: Float { 0.5 }
    /// The shadow takes over once its smoothed error has been below this share of the foreground's (−6 dB) for
    /// `shadowWinningTunedBlocks` far-end blocks of 10 ms in a row (`shadowWinningBlockCount`), while the foreground
    /// takes less than 3 dB off the microphone (its error above `shadowForegroundMinimumRatio` of it). The run was set
    /// on 10 ms blocks; counted in blocks, a call's 5 ms blocks asked for half of it, and in our dt-change t09 (the
    /// loudspeaker moved closer in double talk) a shadow that led for 25 ms took over a second time, 1.5 s after the
    /// move: the suppressor forgot the talker it heard, learned it as echo, and the talker lost 3-34 dB over the next
    /// 2.5 s (DT STOI 0.863 against 0.930 at 10 ms; 0.924 now). The errors' smoothing stays per block: per 10 ms it
    /// also moved the shadow's other verdicts, which cost the 5 ms test of a path moved before the talker's end 1.9 dB
    /// of the echo taken off after it (`DoubleTalkPathChangeTests`).
    private static var shadowWinningRatio: Float { 0.25 }
    private static var shadowForegroundMinimumRatio: Float { 0.5 }
    private static var shadowWinningTunedBlocks: Int { 5 }
    private let shadowWinningBlockCount: Int
    /// The shadow's smoothed error over the foreground's below which it leads a foreground that lost the path (−3 dB;
    /// `isShadowLeading`).
    private static var shadowLeadingRatio: Float { 0.5 }
    /// The foreground's smoothed error over the microphone's at or below which a lagging shadow restarts from it (−10
    /// dB), and the shadow's smoothed error over the foreground's above which it lags (6 dB; `resyncLaggingShadow`).
    private static var shadowResyncForegroundRatio: Float { 0.1 }
    private static var shadowResyncLagRatio: Float { 4 }

    private var notch: DCNotch
    private var previousNear: Float = 0, previousReference: Float = 0, previousOutput: Float = 0
    private var blockIndex = 0
    private var previousMicrophoneClipped = false
    private var misbehavingBlocks = 0
    private var fastMeanDifference: Float = 0, slowMeanDifference: Float = 0
    private var fastDifferenceVariance: Float = 0, slowDifferenceVariance: Float = 0

    /// Forward transforms are scaled by 1 / window, as speexdsp's are, so its regularisers carry over.
    private let forwardScale: Float
    private let inverseScale: Float
    private static var preEmphasis: Float { 0.9 }
    /// Microphone samples this loud or louder count as clipped (speexdsp's level).
    static var clippedMagnitude: Int16 { 32000 }

    /// Whether a microphone sample counts as clipped (`clippedMagnitude` or beyond either way). Real-time safe.
    static func isClipped(_ sample: Int16) -> Bool { sample <= -clippedMagnitude || sample >= clippedMagnitude }
    /// The last block's leaked echo over its error energy (`MDFLearningRate.leakedEchoToErrorRatio`). Real-time safe.
    var leakedEchoToErrorRatio: Float { rate.leakedEchoToErrorRatio }

    /// Whether a near talker is heard (`EchoCanceller.isNearTalkerHeard`): the adapted filter (not the shadow) then
    /// learns at `nearTalkerStepShare` of its step. Real-time safe; set it before `process`.
    var isNearTalkerHeard = false
    /// The share of its step the adapted filter takes while a near talker is heard (`EchoCanceller.isNearTalkerHeard`).
    var nearTalkerStepShare: Float = 1
    /// Whether the near talker has been heard for a second (`EchoCanceller.isTalkerHeardLong`). Real-time safe; set it
    /// before `process`.
    var isTalkerHeardLong = false

    /// Whether the adapted learning rate keeps a floor at the start-up rate (`MDFLearningRate.keepsStartupStep`): set
    /// it while the far end plays alone for sure. Real-time safe; set it before `process`.
    var keepsStartupStep: Bool {
        get { rate.keepsStartupStep }
        set { rate.keepsStartupStep = newValue }
    }

    /// `longestFilterLengthFrames`: the most `extend(toPartitions:)` grows the filter to (at least `filterLengthFrames`).
    init(frameCount: Int, filterLengthFrames: Int, longestFilterLengthFrames: Int = 0, sampleRate: Int) {
        self.frameCount = frameCount
        blockRate = BlockRate(blocksPerSecond: Double(sampleRate) / Double(frameCount))
        blocksPerPartition = blockRate.blocksPerTunedBlock
        let partition = frameCount * blocksPerPartition
        partitionFrameCount = partition
        partitionCount = (filterLengthFrames + partition - 1) / partition
        longestPartitionCount = max(partitionCount, (longestFilterLengthFrames + partition - 1) / partition)
        let longest = longestPartitionCount
        ringCount = longest * blocksPerPartition + 1
        let window = 2 * partition
        windowFrameCount = window
        binCount = window / 2 + 1
        laneBinCount = (binCount + 7) / 8 * 8
        fft = MixedRadixRealFFT(frameCount: window)
        lostPathRun = LostPathRun(rate: blockRate)
        talkerPathMove = TalkerPathMove(rate: blockRate)
        shadowWinningBlockCount = Self.shadowWinningTunedBlocks * blockRate.blocksPerTunedBlock
        let spectrum = 2 * laneBinCount
        referenceWindow = .zeroed(window)
        nearBlock = .zeroed(frameCount)
        foregroundEcho = .zeroed(frameCount)
        backgroundEcho = .zeroed(frameCount)
        scratch = .zeroed(window)
        errorWindow = .zeroed(window)
        trustedMicrophone = .zeroed(frameCount)
        referenceSpectra = .zeroed(ringCount * spectrum)
        background = .zeroed(longest * spectrum)
        foreground = .zeroed(longest * spectrum)
        accumulator = .zeroed(spectrum)
        errorSpectrum = .zeroed(spectrum)
        derivativeWindow = .zeroed(window)
        derivativeSpectra = .zeroed(ringCount * spectrum)
        derivativeEcho = .zeroed(frameCount)
        rate = MDFLearningRate(frameCount: frameCount, filterBlockCount: partitionCount * blocksPerPartition,
                               blocksPerTunedBlock: blocksPerPartition, sampleRate: sampleRate, binCount: binCount,
                               laneBinCount: laneBinCount)
        partitionWeight = .zeroed(longest)
        crossfade = .zeroed(2 * frameCount)
        shadow = .zeroed(longest * spectrum)
        shadowEcho = .zeroed(frameCount)
        shadowErrorWindow = .zeroed(window)
        shadowErrorSpectrum = .zeroed(spectrum)
        shadowStepPerBin = .zeroed(laneBinCount)
        shadowPartitionWeight = .zeroed(longest)
        weightSnapshot = .zeroed(longest * spectrum)
        shiftTaps = .zeroed(longest * partition)
        previousPath = .zeroed(longest * spectrum)
        previousReferenceSpectra = .zeroed(ringCount * spectrum)
        previousPathEcho = .zeroed(frameCount)
        for i in 0..<(2 * frameCount) {
            crossfade[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(2 * frameCount)))
        }
        notch = DCNotch(radius: DCNotch.speexRadius(sampleRate: sampleRate))
        forwardScale = 1 / Float(window)
        inverseScale = Float(window)
        // Initial proportional weights: about ten times more step for the first partition than for the last.
        // `reset` keeps whatever they have become (the last path's energy profile), as speexdsp does. Partitions a
        // longer filter adds continue the profile.
        let decay = Float(exp(-2.4 / Double(partitionCount)))
        var weight: Float = 0.7, sum: Float = 0
        for j in 0..<longest {
            partitionWeight[j] = weight
            if j < partitionCount { sum += weight }
            weight *= decay
        }
        for j in 0..<longest {
            partitionWeight[j] *= 0.8 / sum
            shadowPartitionWeight[j] = Self.shadowStep * partitionWeight[j]
        }
        reset()
        // Unoptimised builds resolve `sum()`'s conditional conformance (SIMD8 of a floating-point scalar) on first
        // use, which allocates and locks: first use is here, not when the filter first counts as adapted on the
        // real-time thread.
        _ = SIMD8<Float>().sum()
    }

    deinit {
        for pointer in [referenceWindow, nearBlock, foregroundEcho, backgroundEcho, scratch, errorWindow,
                        trustedMicrophone, referenceSpectra, background, foreground, accumulator, errorSpectrum,
                        partitionWeight, crossfade, shadow, shadowEcho, shadowErrorWindow, shadowErrorSpectrum,
                        shadowStepPerBin, shadowPartitionWeight, weightSnapshot, shiftTaps, previousPath,
                        previousReferenceSpectra, previousPathEcho, derivativeWindow, derivativeSpectra, derivativeEcho] {
            pointer.deallocate()
        }
    }

    /// Keeps the path learned as the previous one (`previousPathEstimate`, `adoptPreviousPath`), and the reference's
    /// history before this block, which its estimate reads on; then forgets the path (`reset`). Real-time safe.
    func resetKeepingPreviousPath() {
        let spectrumFloats = 2 * laneBinCount, ring = ringCount
        previousPath.update(from: foreground, count: longestPartitionCount * spectrumFloats)
        // Laid out as `reset` leaves the ring: the spectrum before this block's at 0, older ones back from there.
        for age in 1..<ring {
            spectrum(previousReferenceSpectra, (ring + 1 - age) % ring)
                .update(from: referenceSpectrum(age: age), count: spectrumFloats)
        }
        reset()
    }

    /// The previous path's (`resetKeepingPreviousPath`) echo estimate of the last block processed, pre-emphasised,
    /// `frameCount` frames (beside `filteredMicrophone`). Call it after every block from the reset on, for its
    /// reference history to stay whole. Real-time safe.
    func previousPathEstimate() -> UnsafeBufferPointer<Float> {
        spectrum(age: 0, in: previousReferenceSpectra).update(from: referenceSpectrum(age: 0), count: 2 * laneBinCount)
        filter(previousPath, echo: previousPathEcho, ring: previousReferenceSpectra)
        return UnsafeBufferPointer(start: previousPathEcho, count: frameCount)
    }

    /// The microphone of the last block as the filters saw it (notched, pre-emphasised), `frameCount` frames.
    /// Real-time safe.
    var filteredMicrophone: UnsafeBufferPointer<Float> { UnsafeBufferPointer(start: nearBlock, count: frameCount) }

    /// Takes the previous path back, moved `frames` later (earlier when negative; `shift`), into all three weight sets.
    /// Real-time safe.
    func adoptPreviousPath(shiftedBy frames: Int) {
        shift(previousPath, byFrames: frames)
        let count = longestPartitionCount * 2 * laneBinCount
        foreground.update(from: previousPath, count: count)
        background.update(from: previousPath, count: count)
        shadow.update(from: previousPath, count: count)
        forgetPathComparison()
    }

    /// Forgets the echo path (all but the per-partition step weights). Real-time safe.
    func reset() {
        let spectrum = 2 * laneBinCount
        referenceWindow.update(repeating: 0, count: windowFrameCount)
        errorWindow.update(repeating: 0, count: windowFrameCount)
        referenceSpectra.update(repeating: 0, count: ringCount * spectrum)
        derivativeWindow.update(repeating: 0, count: windowFrameCount)
        derivativeSpectra.update(repeating: 0, count: ringCount * spectrum)
        previousDerivative = 0
        background.update(repeating: 0, count: longestPartitionCount * spectrum)
        foreground.update(repeating: 0, count: longestPartitionCount * spectrum)
        errorSpectrum.update(repeating: 0, count: spectrum)
        rate.reset()
        notch.reset()
        previousNear = 0; previousReference = 0; previousOutput = 0
        blockIndex = 0
        previousMicrophoneClipped = false
        misbehavingBlocks = 0
        forgetPathComparison()
        newestSpectrum = 0
        shadow.update(repeating: 0, count: longestPartitionCount * spectrum)
        shadowErrorWindow.update(repeating: 0, count: windowFrameCount)
        shadowErrorSpectrum.update(repeating: 0, count: spectrum)
        shadowErrorSmoothed = 0; foregroundErrorSmoothed = 0; nearSmoothed = 0
        shadowWinningBlocks = 0
        isShadowLeading = false
        lostPathRun = LostPathRun(rate: blockRate)
        talkerPathMove = TalkerPathMove(rate: blockRate)
    }

    /// Forgets the two paths' comparison (`decideBetweenPaths`).
    private func forgetPathComparison() {
        fastMeanDifference = 0; slowMeanDifference = 0
        fastDifferenceVariance = 0; slowDifferenceVariance = 0
    }

    @inline(__always) private func spectrum(_ base: UnsafeMutablePointer<Float>, _ index: Int) -> UnsafeMutablePointer<Float> {
        base + index * 2 * laneBinCount
    }

    /// The reference spectrum `age` blocks old (0: this block's).
    @inline(__always) private func referenceSpectrum(age: Int) -> UnsafeMutablePointer<Float> {
        spectrum(age: age, in: referenceSpectra)
    }

    /// The spectrum `age` blocks old in a ring of `ringCount` spectra (`referenceSpectra`'s layout).
    @inline(__always) private func spectrum(age: Int,
                                            in ring: UnsafeMutablePointer<Float>) -> UnsafeMutablePointer<Float> {
        spectrum(ring, (newestSpectrum + ringCount - age) % ringCount)
    }

    /// Grows the filter to `partitions` (at most `longestPartitionCount`; it never shrinks); the added ones start from
    /// zero, as after `reset`, and the reference spectra they filter are there already (the ring holds the longest
    /// filter's). It stays grown through `reset`: the room's length is not the path's. Real-time safe.
    func extend(toPartitions partitions: Int) {
        partitionCount = min(longestPartitionCount, max(partitionCount, partitions))
    }

    private func forward(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        fft.forward(input, real: output, imaginary: output + laneBinCount)
        let scale = forwardScale
        for k in 0..<binCount {
            output[k] *= scale
            output[laneBinCount + k] *= scale
        }
    }

    private func inverse(_ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>) {
        fft.inverse(real: input, imaginary: input + laneBinCount, output: output)
        let scale = inverseScale
        for i in 0..<windowFrameCount { output[i] *= scale }
    }

    /// Σ_j X(age j · blocks per partition) · W_j into `accumulator`, then the echo block (the window's last `frameCount`
    /// frames) into `echo`.
    /// Eight bins at a time over all partitions, the sums in registers (partition by partition in the same order
    /// as a pass per partition, so the same results); the ring (`referenceSpectra` unless told) is walked from the
    /// newest spectrum back.
    private func filter(_ weights: UnsafeMutablePointer<Float>, echo: UnsafeMutablePointer<Float>,
                        ring: UnsafeMutablePointer<Float>? = nil) {
        let imaginary = laneBinCount, spectrumFloats = 2 * laneBinCount
        let spectra = ring ?? referenceSpectra
        let newest = spectrum(age: 0, in: spectra)
        let partitionStride = blocksPerPartition * spectrumFloats, ringFloats = ringCount * spectrumFloats
        var k = 0
        while k < laneBinCount {
            var sumRe0 = SpectrumLanes(repeating: 0), sumIm0 = SpectrumLanes(repeating: 0)
            var sumRe1 = SpectrumLanes(repeating: 0), sumIm1 = SpectrumLanes(repeating: 0)
            var x = newest, w = weights
            for _ in 0..<partitionCount {
                let xr0 = SpectrumLanes(loading: x + k), xi0 = SpectrumLanes(loading: x + (imaginary &+ k))
                let wr0 = SpectrumLanes(loading: w + k), wi0 = SpectrumLanes(loading: w + (imaginary &+ k))
                let xr1 = SpectrumLanes(loading: x + (k &+ 4)), xi1 = SpectrumLanes(loading: x + (imaginary &+ k &+ 4))
                let wr1 = SpectrumLanes(loading: w + (k &+ 4)), wi1 = SpectrumLanes(loading: w + (imaginary &+ k &+ 4))
                sumRe0 = sumRe0 + xr0 * wr0 - xi0 * wi0
                sumIm0 = sumIm0 + xr0 * wi0 + xi0 * wr0
                sumRe1 = sumRe1 + xr1 * wr1 - xi1 * wi1
                sumIm1 = sumIm1 + xr1 * wi1 + xi1 * wr1
                x -= partitionStride
                if x < spectra { x += ringFloats }
                w += spectrumFloats
            }
            sumRe0.store(into: accumulator + k)
            sumIm0.store(into: accumulator + (imaginary &+ k))
            sumRe1.store(into: accumulator + (k &+ 4))
            sumIm1.store(into: accumulator + (imaginary &+ k &+ 4))
            k &+= 8
        }
        inverse(accumulator, into: scratch)
        let start = windowFrameCount - frameCount
        for i in 0..<frameCount { echo[i] = scratch[start + i] }
    }

    /// Cancels one block: `microphone` and `reference` in Int16 units, `output` the de-emphasised error.
    /// Real-time safe.
    func process(microphone: UnsafePointer<Int16>, reference: UnsafePointer<Int16>, output: UnsafeMutablePointer<Int16>) {
        let n = frameCount, window = windowFrameCount
        let timeN = Float(2 * n)
        blockIndex += 1
        isMicrophoneClipped = false
        for i in 0..<n {
            let notched = notch.filter(Float(microphone[i]))
            nearBlock[i] = notched - Self.preEmphasis * previousNear
            previousNear = notched
            // A clipped sample and the one after it (the pre-emphasis reaches one sample on) do not say what the
            // microphone heard: their error teaches no filter.
            let clipped = Self.isClipped(microphone[i])
            trustedMicrophone[i] = clipped || previousMicrophoneClipped ? 0 : 1
            previousMicrophoneClipped = clipped
            isMicrophoneClipped = isMicrophoneClipped || clipped
        }
        referenceWindow.update(from: referenceWindow + n, count: window - n)
        derivativeWindow.update(from: derivativeWindow + n, count: window - n)
        var referenceEnergy: Float = 0
        for i in 0..<n {
            let (sample, derivative) = saturation.shape(Float(reference[i]))
            let emphasised = sample - Self.preEmphasis * previousReference
            previousReference = sample
            referenceWindow[window - n + i] = emphasised
            referenceEnergy += emphasised * emphasised
            derivativeWindow[window - n + i] = derivative - Self.preEmphasis * previousDerivative
            previousDerivative = derivative
        }
        newestSpectrum = (newestSpectrum + 1) % ringCount
        let newest = referenceSpectrum(age: 0)
        forward(referenceWindow, into: newest)
        forward(derivativeWindow, into: spectrum(age: 0, in: derivativeSpectra))

        // Foreground output.
        filter(foreground, echo: foregroundEcho)
        var foregroundErrorEnergy: Float = 0, nearEnergy: Float = 0, foregroundEchoEnergy: Float = 0
        for i in 0..<n {
            let e = nearBlock[i] - foregroundEcho[i]
            foregroundErrorEnergy += e * e
            nearEnergy += nearBlock[i] * nearBlock[i]
            foregroundEchoEnergy += foregroundEcho[i] * foregroundEcho[i]
        }

        if rate.keepsStartupStep && rate.isAdapted && farEndPlays(referenceEnergy: referenceEnergy)
            && !hasLostPath {
            learnSaturation()
        }
        let (shadowErrorEnergy, shadowEchoEnergy) = runShadow()
        var estimateDifferenceEnergy: Float = 0
        for i in 0..<n {
            let d = foregroundEcho[i] - shadowEcho[i]
            estimateDifferenceEnergy += d * d
        }
        if rate.isAdapted { adjustPartitionWeights() }
        adapt(background, partitionWeight: partitionWeight, stepPerBin: rate.stepPerBin,
              stepShare: isNearTalkerHeard ? nearTalkerStepShare : 1, error: errorSpectrum)
        constrainDuePartitions(background)

        // Background output.
        filter(background, echo: backgroundEcho)
        var differenceEnergy: Float = 10, backgroundErrorEnergy: Float = 0
        for i in 0..<n {
            let d = foregroundEcho[i] - backgroundEcho[i]
            differenceEnergy += d * d
            let e = nearBlock[i] - backgroundEcho[i]
            backgroundErrorEnergy += e * e
        }
        decideBetweenPaths(foregroundErrorEnergy: foregroundErrorEnergy,
                           backgroundErrorEnergy: &backgroundErrorEnergy, differenceEnergy: differenceEnergy)
        (restartedFromShadow, restartedUnderTalker) = judgeShadow(
            shadowErrorEnergy: shadowErrorEnergy, foregroundErrorEnergy: foregroundErrorEnergy, nearEnergy: nearEnergy,
            referenceEnergy: referenceEnergy, foregroundEchoEnergy: foregroundEchoEnergy,
            estimateDifferenceEnergy: estimateDifferenceEnergy)
        if restartedFromShadow {
            foreground.update(from: shadow, count: partitionCount * 2 * laneBinCount)
            background.update(from: shadow, count: partitionCount * 2 * laneBinCount)
            foregroundEcho.update(from: shadowEcho, count: n)
            backgroundEcho.update(from: shadowEcho, count: n)
            backgroundErrorEnergy = shadowErrorEnergy
            rate.restart()
            forgetPathComparison()
        }

        // Output (foreground echo removed, de-emphasised) and the background error for adaptation.
        var errorEchoCorrelation: Float = 0, echoEnergy: Float = 0
        let errorStart = window - n
        for i in 0..<n {
            let value = nearBlock[i] - foregroundEcho[i] + Self.preEmphasis * previousOutput
            previousOutput = value
            output[i] = Int16(max(-32768, min(32767, value.rounded())))
            let trusted = trustedMicrophone[i]
            let e = trusted * (nearBlock[i] - backgroundEcho[i]), y = trusted * backgroundEcho[i]
            errorWindow[errorStart + i] = e
            errorEchoCorrelation += e * y
            echoEnergy += y * y
            scratch[errorStart + i] = y
        }
        forward(errorWindow, into: errorSpectrum)
        scratch.update(repeating: 0, count: window - n)
        forward(scratch, into: accumulator)
        powerSpectrum(errorSpectrum, into: rate.errorPowerBins)
        powerSpectrum(accumulator, into: rate.echoPowerBins)
        powerSpectrum(newest, into: rate.referencePowerBins)

        let finite = backgroundErrorEnergy >= 0 && echoEnergy >= 0 && referenceEnergy >= 0
            && foregroundErrorEnergy < timeN * 1e9 && echoEnergy < timeN * 1e9 && referenceEnergy < timeN * 1e9
        if !finite {
            misbehavingBlocks += 50
            output.update(repeating: 0, count: n)
        } else if foregroundErrorEnergy > nearEnergy + timeN * 10000 {
            misbehavingBlocks += 1
        } else {
            misbehavingBlocks = 0
        }
        if misbehavingBlocks >= 50 {
            reset()
            return
        }
        // The shadow's echo, when no talker is heard (who would pull it), is what the start-up rate expects the echo's
        // energy to be where it is louder than the reference (`MDFLearningRate.update`).
        rate.update(errorEnergy: max(backgroundErrorEnergy, timeN * 100), echoEnergy: echoEnergy,
                    errorEchoCorrelation: errorEchoCorrelation, referenceEnergy: 2 * referenceEnergy,
                    expectedEchoEnergy: isNearTalkerHeard ? 0 : shadowEchoEnergy)
    }

    /// One step of the loudspeaker's saturation (`LoudspeakerSaturation`): the foreground's error against its
    /// response to the shaping's derivative, filtered from that derivative's own ring of spectra, over the trusted
    /// samples only: a clipping microphone's clipping is not the loudspeaker's.
    private func learnSaturation() {
        filter(foreground, echo: derivativeEcho, ring: derivativeSpectra)
        var correlation: Float = 0, energy: Float = 0, errorEnergy: Float = 0
        for i in 0..<frameCount {
            let trusted = trustedMicrophone[i], e = nearBlock[i] - foregroundEcho[i]
            let z = trusted * derivativeEcho[i]
            correlation += e * z
            energy += z * z
            errorEnergy += trusted * e * e
        }
        saturation.learn(errorCorrelation: correlation, derivativeEnergy: energy, errorEnergy: errorEnergy)
    }

    private func powerSpectrum(_ spectrum: UnsafeMutablePointer<Float>, into power: UnsafeMutablePointer<Float>) {
        for k in 0..<binCount {
            let re = spectrum[k], im = spectrum[laneBinCount + k]
            power[k] = re * re + im * im
        }
    }

    /// The shadow: adapted on last block's error at its fixed step (`shadowStep` over the reference's smoothed
    /// power, as the start-up rate is normalised), constrained like the background, then run over this block.
    /// Returns its error's energy and its echo estimate's over the trusted samples.
    private func runShadow() -> (error: Float, echo: Float) {
        for k in 0..<laneBinCount { shadowStepPerBin[k] = 1 / (rate.referencePower[k] + 10) }
        adapt(shadow, partitionWeight: shadowPartitionWeight, stepPerBin: shadowStepPerBin, stepShare: 1,
              error: shadowErrorSpectrum)
        constrainDuePartitions(shadow)
        filter(shadow, echo: shadowEcho)
        var energy: Float = 0, echoEnergy: Float = 0
        let start = windowFrameCount - frameCount
        for i in 0..<frameCount {
            let e = nearBlock[i] - shadowEcho[i]
            shadowErrorWindow[start + i] = trustedMicrophone[i] * e
            energy += e * e
            echoEnergy += trustedMicrophone[i] * shadowEcho[i] * shadowEcho[i]
        }
        forward(shadowErrorWindow, into: shadowErrorSpectrum)
        return (energy, echoEnergy)
    }

    /// Whether the shadow takes over. After the path changes, the adapted filter's rate follows its leak estimate,
    /// which stays where the old path left it while the error is new echo: a path that turned louder and changed
    /// its shape (the echo 12 dB up, our `pathchange` scene p02) left the filter at 0-15 dB for 4.5 s, and its
    /// error correlates too weakly with the old estimate (−0.2) for the misadjustment monitor. The shadow, at a
    /// fixed rate, re-converges within half a second. A near talker cannot make it win: neither filter can
    /// predict the talker, so the shadow's error stays at least the adapted one's. Only a foreground that takes
    /// less than 3 dB off (the path lost, not merely tracked less well: a long tail the shadow fits faster after a
    /// pause, q08, is left alone) is replaced, and only once it has counted as adapted. A path that moved into a louder
    /// echo can leave the shadow short of its margin for seconds; a run of blocks in which the foreground lost the path
    /// just after cancelling well, and the shadow did better by 1 dB, finds it too (`LostPathRun`).
    ///
    /// The shadow learns from a near talker at its whole step, and after double talk it may lag far behind a foreground
    /// that cancels well (0-9 dB off where the foreground took 20-25 in `DoubleTalkPathChangeTests`): a path that moved
    /// then found it no better placed than the foreground, and the echo passed for a talker at 7 dB for seconds. So
    /// while the foreground cancels well and the shadow stands 6 dB behind it, the shadow restarts from the foreground's
    /// weights (a copy of the partitions in use; real-time safe).
    ///
    /// Before it wins, a shadow 3 dB ahead of a foreground that lost the path already shows the foreground's output holds
    /// echo it could predict (`isShadowLeading`): a talker fills both errors alike.
    ///
    /// Under a talker who has been heard for a second, the errors cannot tell (the talker fills both): a path that
    /// moves then is found by `TalkerPathMove`, from the differences the talker leaves out. Returns whether the shadow
    /// takes over, and whether for a path moved under a talker.
    private func judgeShadow(shadowErrorEnergy: Float, foregroundErrorEnergy: Float, nearEnergy: Float,
                             referenceEnergy: Float, foregroundEchoEnergy: Float,
                             estimateDifferenceEnergy: Float) -> (restarted: Bool, underTalker: Bool) {
        let smoothing: Float = 0.2
        shadowErrorSmoothed += smoothing * (shadowErrorEnergy - shadowErrorSmoothed)
        foregroundErrorSmoothed += smoothing * (foregroundErrorEnergy - foregroundErrorSmoothed)
        nearSmoothed += smoothing * (nearEnergy - nearSmoothed)
        let farEnd = farEndPlays(referenceEnergy: referenceEnergy), isLost = rate.isAdapted && hasLostPath
        let winning = isLost && farEnd && shadowErrorSmoothed < Self.shadowWinningRatio * foregroundErrorSmoothed
        isShadowLeading = isLost && farEnd && shadowErrorSmoothed < Self.shadowLeadingRatio * foregroundErrorSmoothed
        shadowWinningBlocks = winning ? shadowWinningBlocks + 1 : 0
        let isMoved = lostPathRun.observe(smoothedForegroundError: foregroundErrorSmoothed,
                                          smoothedMicrophone: nearSmoothed, hasLostPath: isLost,
                                          farEndPlays: farEnd, shadowError: shadowErrorEnergy,
                                          foregroundError: foregroundErrorEnergy)
        let isMovedUnderTalker = talkerPathMove.observe(
            microphone: nearEnergy, foregroundError: foregroundErrorEnergy, shadowError: shadowErrorEnergy,
            foregroundEstimate: foregroundEchoEnergy, estimateDifference: estimateDifferenceEnergy,
            hasLostPath: isLost, farEndPlays: farEnd, isTalkerHeard: isNearTalkerHeard,
            isTalkerHeardLong: isTalkerHeardLong)
        if farEnd { resyncLaggingShadow() }
        let isWon = shadowWinningBlocks >= shadowWinningBlockCount || isMoved
        guard isWon || isMovedUnderTalker else { return (false, false) }
        shadowWinningBlocks = 0
        talkerPathMove.shadowTookOver()
        return (true, !isWon)
    }

    /// Restarts the shadow from the foreground's weights while the foreground takes 10 dB or more off the microphone and
    /// the shadow stands 6 dB behind it (see `judgeShadow`); never on a block the shadow takes over, where the foreground
    /// has lost the path. Real-time safe.
    private func resyncLaggingShadow() {
        guard foregroundErrorSmoothed <= Self.shadowResyncForegroundRatio * nearSmoothed,
              shadowErrorSmoothed > Self.shadowResyncLagRatio * foregroundErrorSmoothed else { return }
        shadow.update(from: foreground, count: partitionCount * 2 * laneBinCount)
        shadowErrorSmoothed = foregroundErrorSmoothed
    }

    /// Whether the shadow takes 6 dB or more off the microphone (smoothed over the last blocks): there is echo to
    /// cancel, whatever the adapted filter does (a near talker cannot make it: see `judgeShadow`). Real-time safe.
    var isShadowCancelling: Bool { shadowErrorSmoothed * Self.shadowFoundEchoRatio < nearSmoothed }

    /// Whether the foreground takes less than 3 dB off the microphone (smoothed over the last blocks): the path is
    /// lost, not merely tracked less well.
    private var hasLostPath: Bool { foregroundErrorSmoothed > Self.shadowForegroundMinimumRatio * nearSmoothed }

    /// Whether the far end plays: the pre-emphasised reference's energy over the block.
    private func farEndPlays(referenceEnergy: Float) -> Bool { referenceEnergy > Float(2 * frameCount) * 1000 }

    /// W_j += s · μ_k · p_j · conj(X(age j · blocks per partition + 1)) · E for every partition (s: `stepShare`): last
    /// block's error against the reference spectra it was filtered from.
    private func adapt(_ weights: UnsafeMutablePointer<Float>, partitionWeight: UnsafeMutablePointer<Float>,
                       stepPerBin: UnsafeMutablePointer<Float>, stepShare: Float, error: UnsafeMutablePointer<Float>) {
        let imaginary = laneBinCount
        for j in 0..<partitionCount {
            let x = referenceSpectrum(age: j &* blocksPerPartition &+ 1), w = spectrum(weights, j)
            let weight = SpectrumLanes(repeating: partitionWeight[j] * stepShare)
            var k = 0
            while k < laneBinCount {
                let xr = SpectrumLanes(loading: x + k), xi = SpectrumLanes(loading: x + (imaginary &+ k))
                let er = SpectrumLanes(loading: error + k)
                let ei = SpectrumLanes(loading: error + (imaginary &+ k))
                let mu = weight * SpectrumLanes(loading: stepPerBin + k)
                let wr = SpectrumLanes(loading: w + k), wi = SpectrumLanes(loading: w + (imaginary &+ k))
                (wr + mu * (xr * er + xi * ei)).store(into: w + k)
                (wi + mu * (xr * ei - xi * er)).store(into: w + (imaginary &+ k))
                k &+= 4
            }
        }
    }

    /// Constrains partition 0 and this block's rotating partition, and every partition on the first block of each
    /// partition's span where a partition spans several blocks (see the type's notes).
    private func constrainDuePartitions(_ weights: UnsafeMutablePointer<Float>) {
        let isEveryPartitionDue = blocksPerPartition > 1 && blockIndex % blocksPerPartition == 0
        for j in 0..<partitionCount
        where isEveryPartitionDue || j == 0 || (partitionCount > 1 && blockIndex % (partitionCount - 1) == j - 1) {
            constrain(spectrum(weights, j))
        }
    }

    /// Keeps only the partition's first `partitionFrameCount` taps (what makes the block convolution linear).
    private func constrain(_ weights: UnsafeMutablePointer<Float>) {
        inverse(weights, into: scratch)
        scratch.advanced(by: partitionFrameCount).update(repeating: 0, count: windowFrameCount - partitionFrameCount)
        forward(scratch, into: weights)
    }

    /// Each partition's step in proportion to its share of the filter's energy (plus a tenth of the largest).
    private func adjustPartitionWeights() {
        var largest: Float = 1, sum: Float = 1
        // Padding lanes past the last bin stay zero in every partition, so whole lanes can be summed.
        for j in 0..<partitionCount {
            let w = UnsafeRawPointer(spectrum(background, j))
            var lanesEnergy = SIMD8<Float>()
            for lane in 0..<(2 * laneBinCount / 8) {
                let v = w.loadUnaligned(fromByteOffset: lane * 32, as: SIMD8<Float>.self)
                lanesEnergy += v * v
            }
            let energy = 1 + lanesEnergy.sum()
            partitionWeight[j] = energy.squareRoot()
            largest = max(largest, partitionWeight[j])
        }
        for j in 0..<partitionCount {
            partitionWeight[j] += 0.1 * largest
            sum += partitionWeight[j]
        }
        for j in 0..<partitionCount { partitionWeight[j] = 0.99 * partitionWeight[j] / sum }
    }

    /// Two-path logic: the background filter replaces the foreground when its residual is reliably lower, and
    /// is reset to the foreground when it is reliably worse.
    private func decideBetweenPaths(foregroundErrorEnergy sff: Float, backgroundErrorEnergy see: inout Float,
                                    differenceEnergy dbf: Float) {
        let d = sff - see
        fastMeanDifference = 0.6 * fastMeanDifference + 0.4 * d
        slowMeanDifference = 0.85 * slowMeanDifference + 0.15 * d
        fastDifferenceVariance = 0.36 * fastDifferenceVariance + 0.16 * sff * dbf
        slowDifferenceVariance = 0.7225 * slowDifferenceVariance + 0.0225 * sff * dbf
        let promote = d * abs(d) > sff * dbf
            || fastMeanDifference * abs(fastMeanDifference) > 0.5 * fastDifferenceVariance
            || slowMeanDifference * abs(slowMeanDifference) > 0.25 * slowDifferenceVariance
        if promote {
            fastMeanDifference = 0; slowMeanDifference = 0
            fastDifferenceVariance = 0; slowDifferenceVariance = 0
            foreground.update(from: background, count: partitionCount * 2 * laneBinCount)
            // Cross-fade the echo estimate from the old foreground to the new one over the block.
            let n = frameCount
            for i in 0..<n {
                foregroundEcho[i] = crossfade[i + n] * foregroundEcho[i] + crossfade[i] * backgroundEcho[i]
            }
            return
        }
        let demote = -d * abs(d) > 4 * sff * dbf
            || -fastMeanDifference * abs(fastMeanDifference) > 4 * fastDifferenceVariance
            || -slowMeanDifference * abs(slowMeanDifference) > 4 * slowDifferenceVariance
        if demote {
            background.update(from: foreground, count: partitionCount * 2 * laneBinCount)
            backgroundEcho.update(from: foregroundEcho, count: frameCount)
            see = sff
            fastMeanDifference = 0; slowMeanDifference = 0
            fastDifferenceVariance = 0; slowDifferenceVariance = 0
        }
    }

    /// Writes the filter's taps (background), `partitionCount × partitionFrameCount`, in the output's units. Real-time
    /// safe.
    func impulseResponse(into taps: UnsafeMutablePointer<Float>) {
        let taken = partitionFrameCount
        for j in 0..<partitionCount {
            inverse(spectrum(background, j), into: scratch)
            for i in 0..<taken { taps[j * taken + i] = scratch[i] / inverseScale }
        }
    }

    /// Moves the path in `weights` `frames` later in time (earlier when negative): an echo that comes back the same but
    /// that much later or sooner (an audio server's xrun) is cancelled at once. Taps moved past either end are lost,
    /// and every partition leaves constrained.
    private func shift(_ weights: UnsafeMutablePointer<Float>, byFrames frames: Int) {
        let taken = partitionFrameCount, span = partitionCount * taken, size = MemoryLayout<Float>.stride
        guard frames != 0, frames < span, frames > -span else { return }
        for j in 0..<partitionCount {
            inverse(spectrum(weights, j), into: scratch)
            (shiftTaps + j * taken).update(from: scratch, count: taken)
        }
        if frames > 0 {
            memmove(shiftTaps + frames, shiftTaps, (span - frames) * size)
            shiftTaps.update(repeating: 0, count: frames)
        } else {
            memmove(shiftTaps, shiftTaps - frames, (span + frames) * size)
            (shiftTaps + span + frames).update(repeating: 0, count: -frames)
        }
        for j in 0..<partitionCount {
            scratch.update(from: shiftTaps + j * taken, count: taken)
            (scratch + taken).update(repeating: 0, count: windowFrameCount - taken)
            forward(scratch, into: spectrum(weights, j))
        }
    }

    /// Keeps the adapting filter's weights for `shiftSinceSnapshot`. Real-time safe.
    func takeWeightSnapshot() {
        weightSnapshot.update(from: background, count: longestPartitionCount * 2 * laneBinCount)
    }

    /// How far the adapting filter's impulse response moved since `takeWeightSnapshot`, in frames (positive: later),
    /// from the phase slope of the two weight sets' cross-spectrum summed over partitions, bins 1 to `highestBin`; and
    /// how alike the two are but for that move (the cross-spectrum's magnitude over the two energies, 0 ... 1); and the
    /// share of the bins the cross-spectrum spreads over (its magnitude's participation ratio: 1 when flat, 1/n for a
    /// single bin of n), for a phase slope read off one or two bins of a tone says nothing. Real-time safe.
    func shiftSinceSnapshot(highestBin: Int) -> (frames: Float, similarity: Float, spread: Float) {
        let top = min(max(highestBin, 1), binCount - 1)
        var slopeSum: Float = 0, slopeWeight: Float = 0, magnitudeSum: Float = 0, magnitudeSquares: Float = 0
        var nowEnergy: Float = 0, thenEnergy: Float = 0
        for k in 1...top {
            var re: Float = 0, im: Float = 0
            for j in 0..<partitionCount {
                let now = spectrum(background, j), then = spectrum(weightSnapshot, j)
                let nr = now[k], ni = now[laneBinCount + k], tr = then[k], ti = then[laneBinCount + k]
                re += nr * tr + ni * ti
                im += ni * tr - nr * ti
                nowEnergy += nr * nr + ni * ni
                thenEnergy += tr * tr + ti * ti
            }
            let magnitude = (re * re + im * im).squareRoot()
            let phase = atan2f(im, re)
            let bin = Float(k)
            slopeSum += magnitude * bin * phase
            slopeWeight += magnitude * bin * bin
            magnitudeSum += magnitude
            magnitudeSquares += magnitude * magnitude
        }
        guard slopeWeight > 0, nowEnergy > 0, thenEnergy > 0 else { return (0, 0, 0) }
        let frames = -Float(windowFrameCount) / (2 * Float.pi) * slopeSum / slopeWeight
        return (frames, magnitudeSum / (nowEnergy * thenEnergy).squareRoot(),
                magnitudeSum * magnitudeSum / (Float(top) * magnitudeSquares))
    }
}
