/// How much echo a linear echo canceller leaves, per frequency bin, as ratios the `ResidualEchoSuppressor` learns
/// while the far end plays and multiplies into its residual echo estimates:
///
/// - ρ (`leakage`): leftover per unit of the canceller's echo estimate |Y|²;
/// - γ (`referenceCoupling`): leftover per unit of the reference |X|² (what comes back unmodelled, e.g. harmonics);
/// - δ (`spreadCoupling`, from 0): leftover per unit of the whole estimate's power Σⱼ|Yⱼ|² (a clipping loudspeaker
///   spreads its distortion over bins where the reference is faint);
/// - the double-talk detector's own ρ and γ (`audibleLeakage`, `audibleCoupling`), and the same two learned with each
///   block weighted by its power (`weightedAudibleLeakage`, `weightedAudibleCoupling`);
/// - ρ and γ learned from the blocks whose microphone clipped only (`clippedLeakage`, `clippedReferenceCoupling`): such a
///   block leaves the clipping's distortion too, which no linear filter removes and a mean over all blocks understates.
///
/// They learn downward always and upward at the same rate, but upward at the full rate only after the near talker
/// has been quiet for a while (`LearningStep.isQuiet`); otherwise they only creep up, a step capped at twice the
/// ratio, so a detector fooled by underestimated echo cannot lock them. Learned symmetrically they track the mean
/// leftover rather than a low quantile of it (an asymmetric tracker underestimates the echo and lets its peaks
/// through). They start pessimistic (ρ at 1, δ at 0, γ at the echo path's gain: see `forget`) so the time before the
/// linear filter converges is suppressed.
/// They learn up to 6 dB above what they scale, the reference's up to 6 dB above the reference times the echo path's
/// gain (the microphone's power over the reference's where no talker is heard): a hot microphone beside a loud
/// loudspeaker hears the echo 10-20 dB louder than the reference, and with the reference's ratios capped 6 dB above
/// the reference itself the detector took that echo's onsets for a talker.
///
/// The gain's ratios take the leftover with the noise's mean taken off; in a far-end pause that leftover is the
/// noise's fluctuation over a fading estimate or reference, which teaches them 10-40 dB above the room's coupling.
/// The gain keeps that pessimism (it keeps music onsets and a louder path suppressed), but a double-talk detector
/// reading it would not hear a talker who starts with the far end's next phrase, and, unheard, the talker would teach
/// the ratios further. So the detector's ρ learns from the leftover beyond the noise's mean, and its γ from the
/// leftover beyond twice the noise, rising only where γ·|X|² or the leftover stands out of the noise.
///
/// A mean of per-block ratios is set by the faint blocks: where the estimate or the reference fades, a reverberant
/// leftover over it gives ratios far above a loud block's (in the hall scene q03 the detector's estimate stood 8-15 dB
/// above the filter's actual output through far-end single talk), and a talker under the echo had to stand that much
/// higher to be heard. So each detector ratio has a twin learned with each block's step weighted by its power over the
/// bin's mean power (at most `powerWeightCeiling` times): the ratio of the mean leftover to the mean power, which loud
/// blocks decide. The detector reads the lower of the two estimates, the twins' with a margin for the leftover's peaks
/// (`ResidualEchoSuppressor`); the gain keeps reading the first.
///
/// `init` allocates; `learn` and `forget` are real-time safe.
final class ResidualEchoCoupling {
    /// Bins per ratio array, whole `BinLanes`.
    let laneBinCount: Int
    /// ρ per bin.
    let leakage: UnsafeMutablePointer<Float>
    /// γ per bin.
    let referenceCoupling: UnsafeMutablePointer<Float>
    /// δ per bin.
    let spreadCoupling: UnsafeMutablePointer<Float>
    /// ρ and γ per bin from the blocks whose microphone clipped.
    let clippedLeakage: UnsafeMutablePointer<Float>
    let clippedReferenceCoupling: UnsafeMutablePointer<Float>
    /// The double-talk detector's ρ per bin.
    let audibleLeakage: UnsafeMutablePointer<Float>
    /// The double-talk detector's γ per bin.
    let audibleCoupling: UnsafeMutablePointer<Float>
    /// The detector's ρ per bin, learned power-weighted.
    let weightedAudibleLeakage: UnsafeMutablePointer<Float>
    /// The detector's γ per bin, learned power-weighted.
    let weightedAudibleCoupling: UnsafeMutablePointer<Float>
    /// The estimate's and the reference's mean power per bin over far-end blocks: what weighs a block's step.
    private let meanEstimatePower: UnsafeMutablePointer<Float>
    private let meanReferencePower: UnsafeMutablePointer<Float>

    /// The highest a ratio learns: the leftover 6 dB above its estimate (the reference's ratios: above the reference
    /// scaled by the echo path's gain).
    private static var ceiling: Float { 4 }
    /// How much the ratios to the reference rise when a filter that took next to nothing off starts over
    /// (`forgetEstimateCoupling`): its leftover was at least half the echo they measured.
    private static var keptCouplingMargin: Float { 4 }
    /// The learning steps per 10 ms block (`BlockRate.step(perTunedBlock:)` makes them the block's): at 5 ms blocks
    /// with the same steps per block the ratios learned twice as fast, from estimates of half the length, and fell
    /// 10-15 dB under the leftover they measure; the detector took the leftover's peaks for a talker in half of some
    /// far-end half seconds, and their gentle gain let the echo through (our reverberant r04: ERLE 24.3 dB at 5 ms
    /// blocks against 45.1 at 10 ms; 33.7 with these steps).
    private static var learningDownPerTunedBlock: Float { 0.05 }
    private static var learningUpPerTunedBlock: Float { 0.05 }
    private static var learningCreepPerTunedBlock: Float { 0.005 }
    private let learningDown: Float, learningUp: Float, learningCreep: Float
    /// Leftover over noise above which a block teaches the detector's γ upward even where γ·|X|² is below the
    /// noise: a leftover of noise alone reaches 9 dB above its mean in one bin and block in 10⁴.
    private static var audibleLeftoverRatio: Float { 8 }
    /// Noise power, in units of its mean, that the detector's γ does not take for a leftover: a bin's noise alone
    /// exceeds its mean by twice that in 5 % of blocks, not by 0 dB in 37 % (the noise taught it coupling).
    private static var noiseFluctuation: Float { 2 }
    /// The most a loud block's step counts, in steps of a block at the mean power.
    private static var powerWeightCeiling: Float { 4 }
    /// The largest weighted step.
    private static var weightedStepCeiling: Float { 0.5 }
    /// Smoothing of the mean powers per far-end block of 10 ms (a time constant of half a second).
    private static var meanPowerSmoothingPerTunedBlock: Float { 0.02 }
    private let meanPowerSmoothing: Float

    /// `rate`: the processing blocks'. Not real-time safe.
    init(laneBinCount: Int, rate: BlockRate) {
        self.laneBinCount = laneBinCount
        learningDown = rate.step(perTunedBlock: Self.learningDownPerTunedBlock)
        learningUp = rate.step(perTunedBlock: Self.learningUpPerTunedBlock)
        learningCreep = rate.step(perTunedBlock: Self.learningCreepPerTunedBlock)
        meanPowerSmoothing = rate.step(perTunedBlock: Self.meanPowerSmoothingPerTunedBlock)
        leakage = .zeroed(laneBinCount)
        clippedLeakage = .zeroed(laneBinCount)
        clippedReferenceCoupling = .zeroed(laneBinCount)
        referenceCoupling = .zeroed(laneBinCount)
        spreadCoupling = .zeroed(laneBinCount)
        audibleLeakage = .zeroed(laneBinCount)
        audibleCoupling = .zeroed(laneBinCount)
        weightedAudibleLeakage = .zeroed(laneBinCount)
        weightedAudibleCoupling = .zeroed(laneBinCount)
        meanEstimatePower = .zeroed(laneBinCount)
        meanReferencePower = .zeroed(laneBinCount)
        forget()
    }

    deinit {
        for pointer in [leakage, referenceCoupling, clippedLeakage, clippedReferenceCoupling, spreadCoupling,
                        audibleLeakage, audibleCoupling, weightedAudibleLeakage, weightedAudibleCoupling,
                        meanEstimatePower, meanReferencePower] {
            pointer.deallocate()
        }
    }

    /// Back to the pessimistic start (ρ = 1, δ = 0, the ratios to the reference at `echoPathGain`), as at `init` or
    /// after the linear filter was reset. `echoPathGain`: the microphone's power over the reference's where no talker
    /// is heard (at least 1), as `learn` takes it. A restarted filter leaves the whole echo, which a hot microphone
    /// hears 10-20 dB above the reference: started at the reference's own level, the ratios let the detector take that
    /// echo for a talker, and then could not rise (our hot-microphone g07, its path moved: 7-14 dB for 3 s). Real-time
    /// safe.
    func forget(echoPathGain: Float = 1) {
        restartEstimateRatios()
        let start = max(1, echoPathGain)
        referenceCoupling.update(repeating: start, count: laneBinCount)
        clippedReferenceCoupling.update(repeating: start, count: laneBinCount)
        audibleCoupling.update(repeating: start, count: laneBinCount)
        weightedAudibleCoupling.update(repeating: start, count: laneBinCount)
    }

    /// Back to the pessimistic start for the ratios to the linear filter's estimate (ρ = 1, δ = 0), after the filter
    /// was reset having taken next to nothing off: its leftover was already the whole echo, which the ratios to the
    /// reference measured, so they are kept with a margin (`keptCouplingMargin`, at most 1 unless above it already).
    /// Real-time safe.
    func forgetEstimateCoupling() {
        restartEstimateRatios()
        raiseWithMargin(referenceCoupling)
        raiseWithMargin(clippedReferenceCoupling)
        raiseWithMargin(audibleCoupling)
        raiseWithMargin(weightedAudibleCoupling)
    }

    /// ρ (the gain's and the detector's) back to 1, δ to 0: their pessimistic start.
    private func restartEstimateRatios() {
        leakage.update(repeating: 1, count: laneBinCount)
        clippedLeakage.update(repeating: 1, count: laneBinCount)
        spreadCoupling.update(repeating: 0, count: laneBinCount)
        audibleLeakage.update(repeating: 1, count: laneBinCount)
        weightedAudibleLeakage.update(repeating: 1, count: laneBinCount)
    }

    /// A ratio times `keptCouplingMargin`, but not above 1 unless it already was.
    private func raiseWithMargin(_ ratio: UnsafeMutablePointer<Float>) {
        let margin = BinLanes(repeating: Self.keptCouplingMargin), one = BinLanes(repeating: 1)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let kept = lanes(ratio, k)
            store(minimum(margin * kept, maximum(kept, one)), ratio, k)
        }
    }

    /// One far-end block's learning from the canceller's output power, per bin, less the `noise` and the late
    /// tail (`lateEnergy` · `lateSum`); `estimate` is |Y|² and `reference` |X|² (each with its reverberant tail),
    /// `totalEstimate` Σⱼ|Yⱼ|². `isQuiet`: the near talker has been quiet long enough for the full upward rate.
    /// `mayRise`: false while a leftover may be a talker the detector is not asked about (the ratios then learn
    /// downward only). `echoPathGain`: the microphone's power over the reference's where no talker is heard (at least
    /// 1), which scales the reference's ratios' ceiling. `isMicrophoneClipped`: the block's microphone clipped
    /// (`ResidualEchoSuppressor.isMicrophoneClipped`): the clipped ρ and γ learn from it too, and the detector's four
    /// ratios do not rise. `isNearMiss`: the block stood just under the detector's bar, perhaps a talker's first
    /// syllable (`ResidualEchoSuppressor.process`): the detector's four ratios learn as if the near end were not quiet.
    /// Real-time safe.
    func learn(outputPower: UnsafeMutablePointer<Float>, noise: UnsafeMutablePointer<Float>,
               lateEnergy: Float, lateSum: UnsafeMutablePointer<Float>, estimate: UnsafeMutablePointer<Float>,
               reference: UnsafeMutablePointer<Float>, totalEstimate: Float, isQuiet: Bool, mayRise: Bool,
               echoPathGain: Float, isMicrophoneClipped: Bool, isNearMiss: Bool) {
        let step = self.step(isQuiet: isQuiet, echoPathGain: 1)
        let referenceStep = self.step(isQuiet: isQuiet, echoPathGain: echoPathGain)
        let detectorStep = self.step(isQuiet: isQuiet && !isNearMiss, echoPathGain: 1)
        let detectorReferenceStep = self.step(isQuiet: isQuiet && !isNearMiss, echoPathGain: echoPathGain)
        let rising = BinMask(repeating: mayRise)
        let detectorRising = BinMask(repeating: mayRise && !isMicrophoneClipped)
        // δ is learned in far-end single talk for sure only.
        let spreadRising = rising .& BinMask(repeating: isQuiet)
        let total = BinLanes(repeating: totalEstimate), late = BinLanes(repeating: lateEnergy)
        let smoothing = BinLanes(repeating: meanPowerSmoothing)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let noiseK = lanes(noise, k), estimateK = lanes(estimate, k), referenceK = lanes(reference, k)
            let meanEstimate = lanes(meanEstimatePower, k) + smoothing * (estimateK - lanes(meanEstimatePower, k))
            let meanReference = lanes(meanReferencePower, k) + smoothing * (referenceK - lanes(meanReferencePower, k))
            store(meanEstimate, meanEstimatePower, k)
            store(meanReference, meanReferencePower, k)
            let left = maximum(BinLanes(), lanes(outputPower, k) - noiseK - late * lanes(lateSum, k))
            let heardEstimate = estimateK .> noiseK, heardReference = referenceK .> 1e-12
            learn(leakage, at: k, leftover: left, over: estimateK, step: step, rising: rising, where: heardEstimate)
            if isMicrophoneClipped {
                learn(clippedLeakage, at: k, leftover: left, over: estimateK, step: step, rising: rising,
                      where: heardEstimate)
                learn(clippedReferenceCoupling, at: k, leftover: left, over: referenceK, step: referenceStep,
                      rising: rising, where: heardReference)
            }
            // The detector's ρ: what is left beyond the noise's mean.
            let beyondNoise = maximum(BinLanes(), left - noiseK)
            learn(audibleLeakage, at: k, leftover: beyondNoise, over: estimateK, step: detectorStep,
                  rising: detectorRising, where: heardEstimate)
            learn(weightedAudibleLeakage, at: k, leftover: beyondNoise, over: estimateK,
                  step: detectorStep.weighted(estimateK / (meanEstimate + 1e-12)), rising: detectorRising,
                  where: heardEstimate)
            learn(referenceCoupling, at: k, leftover: left, over: referenceK, step: referenceStep, rising: rising,
                  where: heardReference)
            store(learned(lanes(spreadCoupling, k), leftover: left, over: total, step: step, rising: spreadRising),
                  spreadCoupling, k)
            // The detector's γ: what is left beyond the noise's usual fluctuation, rising only where the echo it
            // predicts or the leftover stands out of the noise.
            let audibleLeftover = maximum(BinLanes(), left - Self.noiseFluctuation * noiseK)
            let loudLeftover = left .> Self.audibleLeftoverRatio * noiseK
            learn(audibleCoupling, at: k, leftover: audibleLeftover, over: referenceK, step: detectorReferenceStep,
                  rising: detectorRising .& ((lanes(audibleCoupling, k) * referenceK .> noiseK) .| loudLeftover),
                  where: heardReference)
            learn(weightedAudibleCoupling, at: k, leftover: audibleLeftover, over: referenceK,
                  step: detectorReferenceStep.weighted(referenceK / (meanReference + 1e-12)),
                  rising: detectorRising .& ((lanes(weightedAudibleCoupling, k) * referenceK .> noiseK) .| loudLeftover),
                  where: heardReference)
        }
    }

    /// A block's rates: the full upward rate if `isQuiet`, else the creep; the ceiling scaled by `echoPathGain` (the
    /// reference's ratios').
    private func step(isQuiet: Bool, echoPathGain: Float) -> LearningStep {
        LearningStep(up: BinLanes(repeating: isQuiet ? learningUp : learningCreep),
                     down: BinLanes(repeating: learningDown), isQuiet: isQuiet,
                     ceiling: BinLanes(repeating: Self.ceiling * echoPathGain))
    }

    /// The rates a block learns at, and whether the near end has been quiet long enough for the full upward rate
    /// (otherwise upward steps are capped at twice the ratio).
    private struct LearningStep {
        var up: BinLanes, down: BinLanes, isQuiet: Bool
        /// The highest the ratio may learn.
        var ceiling: BinLanes

        /// The step for a block `power` times the bin's mean power (`powerWeightCeiling` at most), capped at
        /// `weightedStepCeiling`.
        @inline(__always) func weighted(_ power: BinLanes) -> LearningStep {
            let weight = minimum(BinLanes(repeating: ResidualEchoCoupling.powerWeightCeiling), power)
            let most = BinLanes(repeating: ResidualEchoCoupling.weightedStepCeiling)
            return LearningStep(up: minimum(most, up * weight), down: minimum(most, down * weight), isQuiet: isQuiet,
                                ceiling: ceiling)
        }
    }

    /// One block's step (`learned`) of a ratio's four bins from `k`, where `heard`; elsewhere they stay.
    @inline(__always) private func learn(_ ratio: UnsafeMutablePointer<Float>, at k: Int, leftover: BinLanes,
                                         over power: BinLanes, step: LearningStep, rising: BinMask, where heard: BinMask) {
        let current = lanes(ratio, k)
        store(current.replacing(with: learned(current, leftover: leftover, over: power, step: step, rising: rising),
                                where: heard), ratio, k)
    }

    /// One block's step of a ratio towards leftover / power (at most the step's ceiling): downward always, upward
    /// where `rising`.
    @inline(__always) private func learned(_ ratio: BinLanes, leftover: BinLanes, over power: BinLanes,
                                           step: LearningStep, rising: BinMask) -> BinLanes {
        let target = minimum(minimum(step.ceiling, leftover / power), step.isQuiet ? step.ceiling : 2 * ratio)
        return ratio + (target - ratio) * step.up.replacing(with: BinLanes(), where: .!rising)
            .replacing(with: step.down, where: target .< ratio)
    }
}
