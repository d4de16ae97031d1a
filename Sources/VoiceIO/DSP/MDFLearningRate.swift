/// The per-bin learning rate of `BlockAdaptiveFilter`, after Valin's "On adjusting the learning rate in frequency
/// domain echo cancellation with double-talk" (2007): a fixed start-up rate until the filter has learned enough,
/// then a rate from the leak estimate (how much of the error's spectral fluctuation the echo estimate explains)
/// and the residual-to-error ratio, normalised by the reference's smoothed power per bin. Two additions: while the
/// far end plays alone the adapted rate keeps a floor at the start-up rate (`keepsStartupStep`); and the start-up
/// rate expects an echo louder than the reference where it is told so (`update`'s `expectedEchoEnergy`).
///
/// The filter fills this block's power spectra (`errorPowerBins`, `echoPowerBins`, `referencePowerBins`) and calls
/// `update`; `stepPerBin` is then the next block's step. Blocks shorter than the tuned 10 ms (a call's 5 ms) are read
/// over a tuned block: the error's and the echo's spectra are summed over the last `blocksPerTunedBlock` blocks, so
/// the rate's regularisers (in speexdsp's units) weigh as at 10 ms and a single short block's spectra do not swing it.
/// `init` allocates; the rest is real-time safe.
final class MDFLearningRate {
    let binCount: Int
    /// The reference's smoothed power per bin (lanes padded with zeros), the steps' normaliser.
    let referencePower: UnsafeMutablePointer<Float>
    /// The step per bin for the next block's adaptation.
    let stepPerBin: UnsafeMutablePointer<Float>
    /// This block's power spectra of the background error, the background echo estimate and the reference.
    let errorPowerBins: UnsafeMutablePointer<Float>
    let echoPowerBins: UnsafeMutablePointer<Float>
    let referencePowerBins: UnsafeMutablePointer<Float>
    /// The error's and the echo's spectra of the tuned block's earlier blocks, a ring of `blocksPerTunedBlock − 1`.
    private let earlierErrorPower: UnsafeMutablePointer<Float>
    private let earlierEchoPower: UnsafeMutablePointer<Float>
    private let earlierBlockCount: Int
    private var earlierIndex = 0
    private let errorPowerSmoothed: UnsafeMutablePointer<Float>
    private let echoPowerSmoothed: UnsafeMutablePointer<Float>
    private let laneBinCount: Int
    /// The filter's length in blocks (its partitions when they are a block long): the reference power's smoothing and
    /// the start-up phase last as many blocks.
    private let filterBlockCount: Int
    private let frameCount: Int
    /// Whether the start-up phase is over (the rate follows the leak estimate).
    private(set) var isAdapted = false
    private var adaptationSum: Float = 0
    private var echoErrorCorrelation: Float = 1, echoPowerCorrelation: Float = 1
    private var leak: Float = 0
    private let farSmoothing: Float
    private let spectralSmoothing: Float
    private let correlationRate: Float
    private let correlationRateCeiling: Float
    /// The adapted step's floor while `keepsStartupStep`, in start-up steps.
    private static var startupStepFloor: Float { 1.5 }

    /// Whether the adapted learning rate may not fall below 1.5 times the fixed start-up rate: set it while the far
    /// end plays alone for sure. Once adapted, the rate follows the leak estimate (echo the filter does not yet
    /// explain), which suits speech; on sustained music the estimate sits at its floor and the filter stalls
    /// several dB short of what the start-up rate reaches (`scripts/music-echo`: 18-27 dB instead of 33-35 on
    /// three of five held-music recordings). While the near end talks the floor must be off: kept through double
    /// talk, it cost the near talker 0.3 in PESQ. Real-time safe; set it before the filter's `process`.
    var keepsStartupStep = false

    /// This block's leaked echo over its error energy, before the rate's cap: the echo the leak estimate finds in the
    /// error (3 × leak × the estimate's energy) over the error's energy. Well above 1 on a block whose error is echo
    /// the filter has not learned (after the path changed); near 0 on one a near talker holds.
    private(set) var leakedEchoToErrorRatio: Float = 0

    /// Not real-time safe (allocates).
    init(frameCount: Int, filterBlockCount: Int, blocksPerTunedBlock: Int, sampleRate: Int, binCount: Int,
         laneBinCount: Int) {
        self.binCount = binCount
        self.laneBinCount = laneBinCount
        self.filterBlockCount = filterBlockCount
        self.frameCount = frameCount
        referencePower = .zeroed(laneBinCount)
        stepPerBin = .zeroed(laneBinCount)
        errorPowerBins = .zeroed(laneBinCount)
        echoPowerBins = .zeroed(laneBinCount)
        referencePowerBins = .zeroed(laneBinCount)
        errorPowerSmoothed = .zeroed(laneBinCount)
        echoPowerSmoothed = .zeroed(laneBinCount)
        earlierBlockCount = max(blocksPerTunedBlock, 1) - 1
        earlierErrorPower = .zeroed(earlierBlockCount * laneBinCount)
        earlierEchoPower = .zeroed(earlierBlockCount * laneBinCount)
        farSmoothing = 0.35 / Float(filterBlockCount)
        spectralSmoothing = Float(frameCount) / Float(sampleRate)
        correlationRate = 2 * Float(frameCount) / Float(sampleRate)
        correlationRateCeiling = 0.5 * Float(frameCount) / Float(sampleRate)
    }

    deinit {
        for pointer in [referencePower, stepPerBin, errorPowerBins, echoPowerBins, referencePowerBins,
                        errorPowerSmoothed, echoPowerSmoothed, earlierErrorPower, earlierEchoPower] {
            pointer.deallocate()
        }
    }

    /// Forgets the reference's and the spectra's history, and restarts. Real-time safe.
    func reset() {
        referencePower.update(repeating: 0, count: laneBinCount)
        stepPerBin.update(repeating: 1, count: laneBinCount)
        errorPowerSmoothed.update(repeating: 0, count: laneBinCount)
        echoPowerSmoothed.update(repeating: 0, count: laneBinCount)
        earlierErrorPower.update(repeating: 0, count: earlierBlockCount * laneBinCount)
        earlierEchoPower.update(repeating: 0, count: earlierBlockCount * laneBinCount)
        restart()
    }

    /// Back to the start-up rate, the leak estimate forgotten. Real-time safe.
    func restart() {
        isAdapted = false
        adaptationSum = 0
        echoErrorCorrelation = 1; echoPowerCorrelation = 1
        leak = 0
    }

    /// The per-bin step for the next block from this block's energies (background error `see`, echo estimate
    /// `syy`, their correlation `sey`, reference `sxx`, and `expectedEchoEnergy`, what the start-up rate takes the
    /// echo's energy to be where that is more than the reference's) and power spectra. Real-time safe.
    func update(errorEnergy see: Float, echoEnergy syy: Float, errorEchoCorrelation sey: Float, referenceEnergy sxx: Float,
                expectedEchoEnergy: Float) {
        if earlierBlockCount > 0 { addEarlierBlocks() }
        var blockCorrelation: Float = 1, blockEchoPower: Float = 1
        for k in 0..<binCount {
            referencePower[k] = (1 - farSmoothing) * referencePower[k] + 1 + farSmoothing * referencePowerBins[k]
            let eh = errorPowerBins[k] - errorPowerSmoothed[k]
            let yh = echoPowerBins[k] - echoPowerSmoothed[k]
            blockCorrelation += eh * yh
            blockEchoPower += yh * yh
            errorPowerSmoothed[k] = (1 - spectralSmoothing) * errorPowerSmoothed[k] + spectralSmoothing * errorPowerBins[k]
            echoPowerSmoothed[k] = (1 - spectralSmoothing) * echoPowerSmoothed[k] + spectralSmoothing * echoPowerBins[k]
        }
        blockEchoPower = blockEchoPower.squareRoot()
        blockCorrelation /= blockEchoPower
        let alpha = min(correlationRate * syy, correlationRateCeiling * see) / see
        echoErrorCorrelation = (1 - alpha) * echoErrorCorrelation + alpha * blockCorrelation
        echoPowerCorrelation = max(1, (1 - alpha) * echoPowerCorrelation + alpha * blockEchoPower)
        echoErrorCorrelation = min(max(echoErrorCorrelation, 0.005 * echoPowerCorrelation), echoPowerCorrelation)
        leak = echoErrorCorrelation / echoPowerCorrelation

        var residualToError = (0.0001 * sxx + 3 * leak * syy) / see
        leakedEchoToErrorRatio = residualToError
        residualToError = max(residualToError, sey * sey / (1 + see * syy))
        residualToError = min(residualToError, 0.5)

        if !isAdapted && adaptationSum > Float(filterBlockCount) && leak * syy > 0.03 * syy { isAdapted = true }
        // The fixed start-up rate, while the reference plays: a quarter of the echo's expected energy over the error
        // energy, at most a quarter. speexdsp expects the echo at the reference's energy, so that an error louder than
        // that is a near talker's; but a hot microphone's echo comes back louder than its reference (18 dB in our
        // hot-microphone g03), and the rate stayed at a sixtieth of a quarter: the filter took 1-3 dB off in 12 s.
        let echoStandIn = max(sxx, expectedEchoEnergy)
        let startupRate = sxx > Float(2 * frameCount) * 1000 ? min(0.25 * echoStandIn, 0.25 * see) / see : 0
        if isAdapted {
            let floorRate = keepsStartupStep ? Self.startupStepFloor * startupRate : 0
            for k in 0..<binCount {
                let e = errorPowerBins[k] + 1
                var r = min(leak * echoPowerBins[k], 0.5 * e)
                r = 0.7 * r + 0.3 * residualToError * e
                stepPerBin[k] = max(r / (e * (referencePower[k] + 10)), floorRate / (referencePower[k] + 10))
            }
        } else {
            for k in 0..<binCount { stepPerBin[k] = startupRate / (referencePower[k] + 10) }
            adaptationSum += startupRate
        }
    }

    /// Adds the tuned block's earlier blocks to this block's error and echo spectra, and keeps this block's in the
    /// ring in place of the oldest.
    private func addEarlierBlocks() {
        let slot = earlierIndex * laneBinCount
        for k in 0..<binCount {
            let error = errorPowerBins[k], echo = echoPowerBins[k]
            for block in 0..<earlierBlockCount {
                errorPowerBins[k] += earlierErrorPower[block * laneBinCount + k]
                echoPowerBins[k] += earlierEchoPower[block * laneBinCount + k]
            }
            earlierErrorPower[slot + k] = error
            earlierEchoPower[slot + k] = echo
        }
        earlierIndex = (earlierIndex + 1) % earlierBlockCount
    }
}
