/// A second linear stage in the residual echo suppressor's short-time spectrum: per bin, a Kalman filter over the
/// reference's last `frameCount` frames (a convolutive transfer function, with the full covariance between the frames)
/// that learns and cancels the echo the block filter (`BlockAdaptiveFilter`) left. In a room that rings past the block
/// filter, the low bins' filters can grow to span more frames, and all of them to remember longer (`grow`).
///
/// The block filter's normalised steps share one rate between its partitions, and a speech reference's partitions are
/// correlated: after a path moves it re-learns a room at a few dB a second, a hall slower still, and under a talker as
/// loud as the echo its leftover stays 8-10 dB under the echo for seconds (our dt-change scenes). The covariance
/// between the reference's frames lets each bin's filter take what a new frame adds however correlated it is: a model
/// of our hall scene w01's echo alone re-learned 14.7 dB over 0.9-1.4 s after its path moved, against 5.7 dB for a
/// normalised gradient of the same span. Its observation noise is the error's own recent power, so a talker slows it
/// as it should, without a detector.
///
/// The model per bin k and frame t: E_k(t) = Σⱼ H_{k,j} X_k(t − j) + noise, H a random walk that leaks toward zero
/// (`leak` per frame, process noise (1 − leak²)·mean |H|²), so that a leftover the block filter has learned since
/// fades from it. With P the covariance of H and u the reference's last frames at bin k: the prior error variance is
/// q = uᵀPu*, the gain g = Pu* / (q + ψ), ψ the error's smoothed power, then H += g·e and P −= g·(Pu*)ᴴ.
/// Bins the reference left silent over the whole span keep their H and P.
///
/// Spectra come split (real, imaginary) with `laneBinCount` bins; every loop runs on four bins at a time
/// (`BinLanes`). `init` allocates; the rest is real-time safe (no allocation, no locks).
final class ResidualPathKalman {
    let laneBinCount: Int
    /// The reference frames each bin's filter spans until `grow`.
    let frameCount: Int
    /// `cancel` calls from one the filter learns from to the next (1: every call; else the `learningInterval`-th, the
    /// 2·`learningInterval`-th, …). A frame that mostly repeats the last (windows that overlap by three quarters, a
    /// call's 5 ms blocks: 2) adds little, and learning costs the square of the frames spanned per bin: learning from
    /// every such frame cost `voicepeer process` at 5 ms blocks twice the CPU time it took with 10 ms windows (3.9 s
    /// for our 26 s f11 against 1.9; 86 % of it here), and a live call on a private PipeWire at 48 kHz lost 11-19
    /// periods in 11 s (`scripts/live-double-talk --block-ms 5`; 0-1 learning from every other frame, 2.3 s offline).
    /// With the frames spanned two apart instead (the model of 10 ms blocks, 1.2 s) our 144 scenes' DT PESQ at 5 ms
    /// blocks read 2.857 and 29 under 0.93 in DT STOI; 2.872 and 26 so.
    let learningInterval: Int
    /// Calls to `cancel` before it learns again (0: the next).
    private var framesUntilLearning: Int
    /// What `grow` makes of the filter: the frames the low bins then span, how many bins from 0 (rounded up to whole
    /// groups of four), and the leak per frame of every bin's walk.
    struct Growth {
        var frameCount: Int
        var binCount: Int
        var leak: Float
    }
    private let growth: Growth
    /// Whether `grow` was called.
    private var isGrown = false
    /// The most frames a bin's filter spans, grown or not: the reference ring's layout, and the covariance's of the
    /// bins that grow (the others' is laid out for `frameCount`).
    private let longestFrameCount: Int
    /// Floats in each of P's two parts.
    private let covarianceFloatCount: Int
    /// Whether the filter is at its start (`reset`) and has learned nothing since: it cancels nothing.
    private(set) var isReset = true

    // Reference spectra, a ring of `longestFrameCount` frames (frame-major, bins contiguous).
    private let referenceReal: UnsafeMutablePointer<Float>
    private let referenceImaginary: UnsafeMutablePointer<Float>
    private var newest = 0
    // H per frame, bins contiguous. P and Pu* per group of four bins (`entry`, `gainEntry`): a bin group's whole
    // covariance is contiguous, which the per-bin updates walk.
    private let weightReal: UnsafeMutablePointer<Float>
    private let weightImaginary: UnsafeMutablePointer<Float>
    private let covarianceReal: UnsafeMutablePointer<Float>
    private let covarianceImaginary: UnsafeMutablePointer<Float>
    /// The output spectrum with the estimate taken off (`cancel`), `laneBinCount` bins each.
    let cleanedReal: UnsafeMutablePointer<Float>
    let cleanedImaginary: UnsafeMutablePointer<Float>
    // Pu* per frame (per group of four bins, `gainEntry`); per bin the prior error variance q, the error's smoothed
    // power ψ and the reference's power over the span.
    private let gainReal: UnsafeMutablePointer<Float>
    private let gainImaginary: UnsafeMutablePointer<Float>
    private let priorVariance: UnsafeMutablePointer<Float>
    private let errorPower: UnsafeMutablePointer<Float>
    private let referencePower: UnsafeMutablePointer<Float>

    /// H's prior variance at the start: the leftover's path at −20 dB of the reference's.
    private static var initialVariance: Float { 0.01 }
    /// H's leak per frame toward zero.
    private var leak: Float
    /// The error's power smoothing per frame (ψ).
    private static var errorSmoothing: Float { 0.5 }

    /// `learningInterval`: see its property (at least 1). `growth`: what `grow` makes of the filter (nil: it stays as
    /// it is). Not real-time safe (allocates).
    init(laneBinCount: Int, frameCount: Int, learningInterval: Int = 1, leak: Float, growth: Growth? = nil) {
        precondition(learningInterval >= 1, "ResidualPathKalman learns from one frame in at least one")
        self.laneBinCount = laneBinCount
        self.frameCount = frameCount
        self.learningInterval = learningInterval
        framesUntilLearning = learningInterval - 1
        self.leak = leak
        self.growth = growth.map { Growth(frameCount: max($0.frameCount, frameCount),
                                          binCount: min(($0.binCount + 3) / 4 * 4, laneBinCount), leak: $0.leak) }
            ?? Growth(frameCount: frameCount, binCount: 0, leak: leak)
        let longest = self.growth.frameCount
        longestFrameCount = longest
        let spectra = longest * laneBinCount, grownGroups = self.growth.binCount / 4
        covarianceFloatCount = 4 * (grownGroups * longest * longest
                                    + (laneBinCount / 4 - grownGroups) * frameCount * frameCount)
        referenceReal = .zeroed(spectra); referenceImaginary = .zeroed(spectra)
        weightReal = .zeroed(spectra); weightImaginary = .zeroed(spectra)
        covarianceReal = .zeroed(covarianceFloatCount); covarianceImaginary = .zeroed(covarianceFloatCount)
        gainReal = .zeroed(spectra); gainImaginary = .zeroed(spectra)
        cleanedReal = .zeroed(laneBinCount); cleanedImaginary = .zeroed(laneBinCount)
        priorVariance = .zeroed(laneBinCount)
        errorPower = .zeroed(laneBinCount)
        referencePower = .zeroed(laneBinCount)
        reset()
    }

    deinit {
        for pointer in [referenceReal, referenceImaginary, weightReal, weightImaginary, covarianceReal,
                        covarianceImaginary, gainReal, gainImaginary, cleanedReal, cleanedImaginary, priorVariance,
                        errorPower, referencePower] {
            pointer.deallocate()
        }
    }

    /// Forgets the leftover's path (H to zero, P to its prior); the reference's frames stay. Real-time safe.
    func reset() {
        let spectra = longestFrameCount * laneBinCount
        weightReal.update(repeating: 0, count: spectra)
        weightImaginary.update(repeating: 0, count: spectra)
        covarianceReal.update(repeating: 0, count: covarianceFloatCount)
        covarianceImaginary.update(repeating: 0, count: covarianceFloatCount)
        for k in stride(from: 0, to: laneBinCount, by: 4) {
            let layout = layout(k)
            for i in 0..<layout.rowLength {
                store(BinLanes(repeating: Self.initialVariance), covarianceReal + entry(layout, i, i), 0)
            }
        }
        isReset = true
    }

    /// Where P of bins k … k + 3 is laid out (k a multiple of 4): the entry its first row starts at, and the entries
    /// per row. Until `grow` every group's is `frameCount` square, one after the other; grown, the groups that grew
    /// come first, each `longestFrameCount` square, then the others: as compact as the spans the updates walk (laid out
    /// for the longest span from the start, with Pu*'s groups as far apart, a short room's whole processing cost 8 %
    /// more; 3 % so). `grown`: the layout before or after `grow` (nil: the current one).
    @inline(__always) private func layout(_ k: Int, grown: Bool? = nil) -> (start: Int, rowLength: Int) {
        let group = k &>> 2, long = longestFrameCount, short = frameCount
        let grownGroups = grown ?? isGrown ? growth.binCount &>> 2 : 0
        return group < grownGroups ? (group &* long &* long, long)
            : (grownGroups &* long &* long &+ (group &- grownGroups) &* short &* short, short)
    }

    /// Where P's entry (i, j) starts in a group's `layout`.
    @inline(__always) private func entry(_ layout: (start: Int, rowLength: Int), _ i: Int, _ j: Int) -> Int {
        (layout.start &+ i &* layout.rowLength &+ j) &<< 2
    }

    /// Where Pu*'s entry i of bins k … k + 3 starts, its groups `rowLength` entries apart (the longest span now).
    @inline(__always) private func gainEntry(_ k: Int, _ i: Int, rowLength: Int) -> Int {
        ((k &>> 2) &* rowLength &+ i) &<< 2
    }

    @inline(__always) private func frame(_ age: Int) -> Int {
        (newest - age + longestFrameCount) % longestFrameCount * laneBinCount
    }

    /// Makes the filter what its `growth` says, for good (`reset` keeps it so): the low bins span its frames, the
    /// added ones starting from zero at their prior variance, uncorrelated with the others, as after `reset` (the ring
    /// holds the reference's frames they read already), and every bin's walk takes its leak. Real-time safe.
    func grow() {
        guard !isGrown else { return }
        let rowFloats = frameCount * 4
        isGrown = true
        leak = growth.leak
        // Every group's rows move from the short layout to the grown one, the last first: each row moves to where it
        // was or later, past the rows before it, which are still to move.
        for group in stride(from: laneBinCount / 4 - 1, through: 0, by: -1) {
            let from = layout(group * 4, grown: false), to = layout(group * 4)
            for i in stride(from: frameCount - 1, through: 0, by: -1) {
                (covarianceReal + entry(to, i, 0)).update(from: covarianceReal + entry(from, i, 0), count: rowFloats)
                (covarianceImaginary + entry(to, i, 0)).update(from: covarianceImaginary + entry(from, i, 0),
                                                               count: rowFloats)
            }
            // The added frames: uncorrelated with the others, at the prior variance.
            for i in 0..<to.rowLength where to.rowLength > frameCount {
                let first = i < frameCount ? frameCount : 0, count = (to.rowLength - first) * 4
                (covarianceReal + entry(to, i, first)).update(repeating: 0, count: count)
                (covarianceImaginary + entry(to, i, first)).update(repeating: 0, count: count)
                if i >= frameCount { store(BinLanes(repeating: Self.initialVariance), covarianceReal + entry(to, i, i), 0) }
            }
        }
    }

    /// The frames the filters of bins k … k + 3 span (k a multiple of 4).
    @inline(__always) private func span(_ k: Int) -> Int {
        isGrown && k < growth.binCount ? growth.frameCount : frameCount
    }

    /// The bins (a multiple of 4 from 0) whose filters span frame `age`.
    @inline(__always) private func binsSpanning(age: Int) -> Int {
        age < frameCount ? laneBinCount : isGrown ? growth.binCount : 0
    }

    /// Takes this frame's reference spectrum. Real-time safe.
    func add(referenceReal real: UnsafeMutablePointer<Float>,
             referenceImaginary imaginary: UnsafeMutablePointer<Float>) {
        newest = (newest + 1) % longestFrameCount
        (referenceReal + newest * laneBinCount).update(from: real, count: laneBinCount)
        (referenceImaginary + newest * laneBinCount).update(from: imaginary, count: laneBinCount)
    }

    /// Takes the estimate off the output spectrum (into `cleanedReal`, `cleanedImaginary`) and, on every
    /// `learningInterval`-th call, learns from what is left. Real-time safe.
    func cancel(outputReal: UnsafeMutablePointer<Float>, outputImaginary: UnsafeMutablePointer<Float>) {
        let m = isGrown ? growth.frameCount : frameCount, n = laneBinCount
        cleanedReal.update(from: outputReal, count: n)
        cleanedImaginary.update(from: outputImaginary, count: n)
        // The estimate Σⱼ H_j X_j comes off; the span's reference power is summed on the way.
        for k in stride(from: 0, to: n, by: 4) {
            store(BinLanes(), priorVariance, k)
            store(BinLanes(), referencePower, k)
        }
        for j in 0..<m {
            let x = frame(j), w = j * n
            for k in stride(from: 0, to: binsSpanning(age: j), by: 4) {
                let xr = lanes(referenceReal + x, k), xi = lanes(referenceImaginary + x, k)
                let hr = lanes(weightReal + w, k), hi = lanes(weightImaginary + w, k)
                store(lanes(cleanedReal, k) - (hr * xr - hi * xi), cleanedReal, k)
                store(lanes(cleanedImaginary, k) - (hr * xi + hi * xr), cleanedImaginary, k)
                store(lanes(referencePower, k) + xr * xr + xi * xi, referencePower, k)
            }
        }
        let learns = framesUntilLearning == 0
        framesUntilLearning = learns ? learningInterval - 1 : framesUntilLearning - 1
        guard learns else { return }
        let smoothing = BinLanes(repeating: Self.errorSmoothing)
        for k in stride(from: 0, to: n, by: 4) {
            let er = lanes(cleanedReal, k), ei = lanes(cleanedImaginary, k)
            store(smoothing * lanes(errorPower, k) + (1 - smoothing) * (er * er + ei * ei), errorPower, k)
        }
        // Pu* and q = uᵀPu*, with u the reference's frames (newest first).
        for i in 0..<m {
            let u = frame(i)
            for k in stride(from: 0, to: binsSpanning(age: i), by: 4) {
                var sr = BinLanes(), si = BinLanes()
                let row = entry(layout(k), i, 0)
                for j in 0..<span(k) {
                    let p = row &+ j &<< 2, x = frame(j)
                    let pr = lanes(covarianceReal + p, 0), pi = lanes(covarianceImaginary + p, 0)
                    let xr = lanes(referenceReal + x, k), xi = lanes(referenceImaginary + x, k)
                    sr += pr * xr + pi * xi
                    si += pi * xr - pr * xi
                }
                let g = gainEntry(k, i, rowLength: m)
                store(sr, gainReal + g, 0); store(si, gainImaginary + g, 0)
                let ur = lanes(referenceReal + u, k), ui = lanes(referenceImaginary + u, k)
                store(lanes(priorVariance, k) + ur * sr - ui * si, priorVariance, k)
            }
        }
        isReset = false
        // H += g·e with g = Pu*/(q + ψ); P −= (Pu*)(Pu*)ᴴ/(q + ψ); then the walk: H leaks, P takes the process
        // noise.
        let leakAll = BinLanes(repeating: leak)
        for k in stride(from: 0, to: n, by: 4) {
            let frames = span(k), layout = layout(k)
            let walk = BinLanes(repeating: (1 - leak * leak) / Float(frames))
            // Bins the reference left silent over the whole span learn nothing and keep what they had.
            let active = lanes(referencePower, k) .> 1e-20
            let inverse = (1 / (lanes(priorVariance, k) + lanes(errorPower, k) + 1e-30))
                .replacing(with: 0, where: .!active)
            let leakLanes = leakAll.replacing(with: 1, where: .!active)
            let er = lanes(cleanedReal, k), ei = lanes(cleanedImaginary, k)
            var weightPower = BinLanes()
            for i in 0..<frames {
                let g = gainEntry(k, i, rowLength: m), w = i * n
                let gr = lanes(gainReal + g, 0), gi = lanes(gainImaginary + g, 0)
                for j in i..<frames {
                    let h = gainEntry(k, j, rowLength: m), p = entry(layout, i, j)
                    let hr = lanes(gainReal + h, 0), hi = lanes(gainImaginary + h, 0)
                    let dr = (gr * hr + gi * hi) * inverse, di = (gi * hr - gr * hi) * inverse
                    store(lanes(covarianceReal + p, 0) - dr, covarianceReal + p, 0)
                    store(lanes(covarianceImaginary + p, 0) - di, covarianceImaginary + p, 0)
                    if j != i {
                        let q = entry(layout, j, i)
                        store(lanes(covarianceReal + q, 0) - dr, covarianceReal + q, 0)
                        store(lanes(covarianceImaginary + q, 0) + di, covarianceImaginary + q, 0)
                    }
                }
                let kr = gr * inverse, ki = gi * inverse
                let hr = leakLanes * (lanes(weightReal + w, k) + kr * er - ki * ei)
                let hi = leakLanes * (lanes(weightImaginary + w, k) + kr * ei + ki * er)
                store(hr, weightReal + w, k); store(hi, weightImaginary + w, k)
                weightPower += hr * hr + hi * hi
            }
            let noise = (walk * weightPower).replacing(with: 0, where: .!active)
            for i in 0..<frames {
                let p = entry(layout, i, i)
                store(lanes(covarianceReal + p, 0) + noise, covarianceReal + p, 0)
            }
        }
    }
}
