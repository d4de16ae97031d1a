/// Tracks the noise floor of a signal per frequency bin and fills what a suppressor removed with noise of the
/// same spectrum and level, so heavy suppression never leaves a dead line nor a quieter one.
///
/// The floor is a windowed minimum (after Martin's minimum statistics): the power, smoothed over a few frames,
/// is minimised over the last `windowFrames` frames (kept as `subwindowCount` sub-window minima, so the window
/// slides in steps), and a fixed factor corrects the minimum's bias below the mean. Speech does not lift it (it
/// pauses within the window); echo need not pause (a far end that talks on over a filter still converging, a
/// room that rings, music), so where the caller's echo estimate is above the floor the floor may only fall. The
/// floor starts as the mean power of the first `startFrames` frames, whatever the echo (a call's echo takes that
/// long to come back): held under the echo from then on, a start read low stayed low until the far end paused. A
/// frame among them whose power stands `startOnsetPowerRatio` over their mean so far ends the start without it: an
/// echo back sooner (a PulseAudio loopback's is 30 ms late) or a first word is not the room. A
/// louder background is followed within one window once the echo leaves it. After exact zeros (a device's late
/// start or stall, or a silent room), sound heard while no echo is expected is the room: the floor starts afresh
/// on it. Sound after zeros heard under echo is the room and the echo's leftover together: the floors take the
/// minimum of the power since the zeros, without its bias, and follow it down until the echo falls under them
/// (`followsMinimum`). A second floor over the same minimum (`backgroundPower`) may be held on fewer frames than the
/// generated noise's (`track`'s `backgroundHoldsRise`). Generated noise has the floor's magnitude scaled by √(1 − g²)
/// for a bin suppressed to gain g, and a random phase from a fixed-seed generator.
///
/// The floor is measured on windowed frames, but the generated spectrum is not windowed noise: its inverse
/// transform spreads over the whole transform. So that the synthesised noise has the background's level in
/// time, its power is scaled by `synthesisPowerScale` = transform length / Σ w², w the analysis window
/// (after synthesis windowing with 50 % overlap-add, each output sample has power P·(w²ᵢ + w²ᵢ₊ₕ)/N = P/N; with a
/// window longer than the synthesis, `LowDelayWindows.generatedPowerScale`).
/// Without it a sine window of two 160-frame blocks in a 512-point transform gives noise 5 dB low.
///
/// `init` allocates; `track`, `add` and `noisePower` are real-time safe.
public final class ComfortNoise {
    /// Bins per spectrum.
    public let binCount: Int
    /// Power of generated noise per unit of tracked power (see the type's notes).
    public let synthesisPowerScale: Float
    /// Frames the minimum spans.
    public let windowFrames: Int
    /// Estimated noise power per bin, in the units of the powers given to `track`: the generated noise's floor.
    public let noisePower: UnsafeMutablePointer<Float>
    /// The same minimum's floor under `track`'s `backgroundHoldsRise` (the same as `noisePower` when it is not
    /// given), same units.
    public let backgroundPower: UnsafeMutablePointer<Float>
    private let smoothedPower: UnsafeMutablePointer<Float>
    /// The echo given to `track`, smoothed as the power is.
    private let smoothedEcho: UnsafeMutablePointer<Float>
    /// Minimum of the sub-window being filled, and the minima of the last `subwindowCount` complete ones.
    private let currentMinimum: UnsafeMutablePointer<Float>
    private let subwindowMinima: UnsafeMutablePointer<Float>
    /// Minimum over the complete sub-windows.
    private let windowMinimum: UnsafeMutablePointer<Float>
    private let subwindowFrames: Int
    /// Frames whose mean power is the first floor.
    private let startFrames: Int
    private var framesTracked = 0
    private var framesInSubwindow = 0
    private var subwindowIndex = 0
    private var completeSubwindows = 0
    /// Frames an analysis window spans (2: two blocks, 50 % overlap).
    private let framesPerWindow: Int
    /// Frames since the last frame of exact zeros, up to `framesPerWindow`.
    private var framesAfterZeros: Int
    /// Whether the floors follow the minimum of the power since a device's zeros ended under echo, without its bias:
    /// they take it from zero and then only fall with it, until the smoothed echo falls under the generated floor.
    /// Held at zero there, the line was digital silence for a second or more of the far end's talk after 0.1-1 s of
    /// zeros at a stream's start (the public pump scenes' rooms, `scripts/late-start --lead 0 --config
    /// ../shared/yardstick/scenes-pump-public.json`: 14 of 15 runs). The biased minimum of sound that holds the echo's
    /// leftover stood 2-16 dB over a quiet room (our quiet-pump set); a minimum followed up as well as down, once the
    /// window had moved past the zeros' end, rose with the leftover of a hall's far talk (quiet-pump's median error
    /// 5.1 dB, 2.5 so).
    private var followsMinimum = false
    private var state: UInt64 = 0x2545_F491_4F6C_DD1D

    private static var subwindowCount: Int { 6 }
    /// Complete sub-windows after zeros heard under echo before the floors follow their minimum (`followsMinimum`):
    /// one, half a second of the suppressor's 3 s window, the time the linear filter takes to learn the echo. Followed
    /// from the first frame, the minimum was the echo whole, and the comfort noise stood at its level until the filter
    /// had learned it (`DuckingTests`' app sound in a noiseless room passed for the near end's voice).
    private static var subwindowsBeforeFollowing: Int { 1 }
    /// Echo power, relative to the generated floor, that still holds that floor from rising: 6 dB under it. A
    /// reverberant room's leftover runs over the caller's estimate of it, and where the estimate stood just under the
    /// floor the leftover lifted it 2-5 dB over the room while the far end talked (our quiet-pump r04, r07, r01 at 10
    /// ms blocks: the line 2.4-3.1 dB louder in the far end's talk than in the quiet). The background floor keeps
    /// the plain rule: read lower, it let a hall's leftover pass for a talker (our far-speaker f11: ERLE 45.4 -> 41.7).
    private static var generatedFloorEchoMargin: Float { 0.25 }
    private static var smoothingWeight: Float { 0.2 }
    /// Frame power over the caller's echo estimate above which a frame after zeros is heard while no echo is
    /// expected: 20 dB.
    private static var echolessPowerOverEcho: Float { 100 }
    /// Smoothed power over smoothed echo above which a frame holds sound the echo does not explain: 6 dB.
    private static var unexplainedPowerOverEcho: Float { 4 }
    /// Frame power over the start frames' mean power (all bins) that ends the start: 6 dB, clear of a room's
    /// scatter. Counted in, 30 ms of echo at 0 dB echo return loss (a PulseAudio null sink's loopback) lifted the
    /// floor, then fallen to the few start frames' minimum times its bias, 4 dB over the room: the line was 3.5 dB
    /// louder while the far end talked than in the quiet (our quiet-pump z04's background under that echo, 10 ms
    /// blocks; +1.3 with the start ended at the echo; on a private PulseAudio, `scripts/live-pump --server pulse`,
    /// +3.5 and +1.3).
    private static var startOnsetPowerRatio: Float { 4 }
    /// Mean over the windowed minimum of the smoothed power of one bin (sine window of two blocks, 50 % overlap,
    /// smoothing 0.2, a 300-frame window): 4.4 dB, measured on white noise.
    private static var minimumBias: Float { 2.75 }
    /// `minimumBias` for an analysis window of more than two frames (`LowDelayWindows`, four 5 ms blocks at a call's
    /// 5 ms, 75 % overlap): its frames overlap more, the smoothed power varies more and its minimum falls further.
    /// Measured on white noise (600-frame window) it is 6.1 dB; with that the line stood 1.0 dB louder in the far end's
    /// talk than in the quiet (`scripts/echo-compare --block-ms 5`, the public pump scenes' median, worst 1.4; our
    /// quiet-pump 3.7, worst 4.6), the far end's leftover lifting it too. 5.3 dB: −0.1 (worst −1.6; quiet-pump 2.7,
    /// worst 3.2), against −0.4 (worst −2.0) with two-block windows of 5 ms blocks and 4.4 dB.
    private static var longWindowMinimumBias: Float { 3.4 }
    /// `minimumBias` or `longWindowMinimumBias`, as `framesPerWindow` says.
    private let bias: Float

    /// `binCount`: bins per spectrum. `windowFrames`: frames the minimum spans (about 1.5 s; at least
    /// `subwindowCount`). `startFrames`: frames whose mean power is the first floor (at least 1).
    /// `synthesisPowerScale`: the transform length over the analysis window's energy Σ w² (1 when the tracked and
    /// the generated spectra share a scale). `framesPerWindow`: frames an analysis window spans (2 for 50 % overlap, at
    /// least 2). Not real-time safe.
    public init(binCount: Int, windowFrames: Int = 150, startFrames: Int = 1, synthesisPowerScale: Float = 1,
                framesPerWindow: Int = 2) {
        precondition(binCount > 0, "ComfortNoise needs at least one bin")
        precondition(framesPerWindow >= 2, "ComfortNoise's analysis window spans at least two frames")
        precondition(startFrames > 0, "ComfortNoise starts from at least one frame")
        precondition(synthesisPowerScale > 0 && synthesisPowerScale.isFinite, "ComfortNoise scale must be positive")
        self.binCount = binCount
        self.synthesisPowerScale = synthesisPowerScale
        self.startFrames = startFrames
        self.framesPerWindow = framesPerWindow
        framesAfterZeros = framesPerWindow
        bias = framesPerWindow > 2 ? Self.longWindowMinimumBias : Self.minimumBias
        subwindowFrames = max(1, windowFrames / Self.subwindowCount)
        self.windowFrames = subwindowFrames * Self.subwindowCount
        noisePower = .zeroed(binCount)
        backgroundPower = .zeroed(binCount)
        smoothedPower = .zeroed(binCount)
        smoothedEcho = .zeroed(binCount)
        currentMinimum = .zeroed(binCount)
        subwindowMinima = .zeroed(binCount * Self.subwindowCount)
        windowMinimum = .zeroed(binCount)
    }

    deinit {
        for pointer in [noisePower, backgroundPower, smoothedPower, smoothedEcho, currentMinimum, subwindowMinima,
                        windowMinimum] {
            pointer.deallocate()
        }
    }

    /// Updates the floor with one frame's power spectrum (`binCount` values). `echo`, if given, is the echo
    /// power each bin of the frame is believed to hold (same units): where it is above the floor (smoothed as
    /// the minimum's power is), the floor may fall but not rise, so a far end that talks for longer than the
    /// window, over a filter that has not yet converged, cannot pass its leftovers off as the room's background.
    /// The generated floor is held by echo down to `generatedFloorEchoMargin` under it (see there).
    /// `holdsRise`: the floor may not rise in any bin this frame (a talker over the echo, who may talk longer
    /// than the window). `backgroundHoldsRise`: the same for `backgroundPower` (nil: `holdsRise`). Real-time safe.
    public func track(power: UnsafePointer<Float>, echo: UnsafePointer<Float>? = nil, holdsRise: Bool = false,
                      backgroundHoldsRise: Bool? = nil) {
        let backgroundHolds = backgroundHoldsRise ?? holdsRise
        // The minimum starts afresh on a stream's first frame and after zeros.
        var startsMinimum = framesTracked == 0
        if let isEcholess = endsZeros(power: power, echo: echo) {
            // Heard under echo, the sound after the zeros is not the start's mean: the floors follow the minimum.
            followsMinimum = !isEcholess
            framesTracked = isEcholess ? 0 : startFrames
            completeSubwindows = 0
            subwindowIndex = 0
            framesInSubwindow = 0
            startsMinimum = true
        }
        if startsMinimum {
            smoothedPower.update(from: power, count: binCount)
            currentMinimum.update(from: power, count: binCount)
        } else if framesTracked < startFrames && endsStart(power: power) {
            framesTracked = startFrames
        }
        // The start frames set both floors to their mean, whatever the echo: held from nothing, the floors stayed there
        // while the far end talked on. One frame's power times the minimum's bias stood 4.4 dB over the room, held
        // there; and the rare low frame, held too, took the line under the room whenever the far end talked.
        let startCount = framesTracked < startFrames ? Float(framesTracked + 1) : 0
        framesTracked = min(framesTracked + 1, startFrames)
        let complete = completeSubwindows > 0
        // Not before the filter has had half a second to learn the echo: the first frames hold it whole.
        let isFollowing = followsMinimum && completeSubwindows >= Self.subwindowsBeforeFollowing
        var echoSum: Float = 0, floorSum: Float = 0
        for k in 0..<binCount {
            let p = smoothedPower[k] + Self.smoothingWeight * (power[k] - smoothedPower[k])
            smoothedPower[k] = p
            let m = min(currentMinimum[k], p)
            currentMinimum[k] = m
            let minimum = complete ? min(windowMinimum[k], m) : m
            let floor = bias * minimum
            var echoPower: Float?
            if let echo {
                smoothedEcho[k] += Self.smoothingWeight * (echo[k] - smoothedEcho[k])
                echoPower = smoothedEcho[k]
            }
            if followsMinimum {
                guard isFollowing else { continue }
                if minimum <= noisePower[k] || (noisePower[k] == 0 && !holdsRise) { noisePower[k] = minimum }
                if minimum <= backgroundPower[k] || (backgroundPower[k] == 0 && !backgroundHolds) {
                    backgroundPower[k] = minimum
                }
                floorSum += noisePower[k]
                echoSum += echoPower ?? 0
            } else if startCount > 0 {
                noisePower[k] += (power[k] - noisePower[k]) / startCount
                backgroundPower[k] = noisePower[k]
            } else {
                let generatedEcho = echoPower.map { $0 / Self.generatedFloorEchoMargin }
                let isUnexplained = echoPower.map { p > Self.unexplainedPowerOverEcho * $0 } ?? true
                if Self.takes(floor, over: noisePower[k], held: holdsRise, echo: generatedEcho,
                              isUnexplained: isUnexplained) {
                    noisePower[k] = floor
                }
                if Self.takes(floor, over: backgroundPower[k], held: backgroundHolds, echo: echoPower,
                              isUnexplained: isUnexplained) {
                    backgroundPower[k] = floor
                }
            }
        }
        if isFollowing && (echo == nil || echoSum < floorSum) { followsMinimum = false }
        framesInSubwindow += 1
        guard framesInSubwindow >= subwindowFrames else { return }
        // A sub-window is complete: it replaces the oldest, and the window's minimum is taken afresh.
        framesInSubwindow = 0
        (subwindowMinima + subwindowIndex * binCount).update(from: currentMinimum, count: binCount)
        subwindowIndex = (subwindowIndex + 1) % Self.subwindowCount
        completeSubwindows = min(completeSubwindows + 1, Self.subwindowCount)
        windowMinimum.update(from: subwindowMinima, count: binCount)
        for window in 1..<completeSubwindows {
            let minima = subwindowMinima + window * binCount
            for k in 0..<binCount { windowMinimum[k] = min(windowMinimum[k], minima[k]) }
        }
        currentMinimum.update(from: smoothedPower, count: binCount)
    }

    /// Whether a frame during the start stands `startOnsetPowerRatio` over the start frames' mean so far (their
    /// running mean is `noisePower` then), all bins summed.
    private func endsStart(power: UnsafePointer<Float>) -> Bool {
        var framePower: Float = 0, startPower: Float = 0
        for k in 0..<binCount {
            framePower += power[k]
            startPower += noisePower[k]
        }
        return framePower > Self.startOnsetPowerRatio * startPower
    }

    /// Whether this frame is the first whole one after exact zeros (a frame of zeros in every bin, which no
    /// microphone's noise gives), nil if not; true if heard while no echo is expected (no estimate, or one 20 dB under
    /// the frame's power): the room's, on which the floor starts afresh as on a stream's first frames; false under
    /// echo, where the floors follow the minimum (`followsMinimum`). Read with the zeros in its window, the floor
    /// stayed at zero (or where the zeros' smoothing had taken it) for a window, held by a talker (the room's onset
    /// after them passes for one), and then under the far end's echo (quiet-pump z01, z04, z05 with 0.1-1 s of zeros
    /// and 0.3-1.2 s of the room before the far end: the line was digital silence for 2-7 s of the far end's talk).
    private func endsZeros(power: UnsafePointer<Float>, echo: UnsafePointer<Float>?) -> Bool? {
        var isZeros = true
        for k in 0..<binCount where power[k] != 0 {
            isZeros = false
            break
        }
        let isFirstWholeFrame = !isZeros && framesAfterZeros == framesPerWindow - 1
        framesAfterZeros = isZeros ? 0 : min(framesAfterZeros + 1, framesPerWindow)
        guard isFirstWholeFrame else { return nil }
        guard let echo else { return true }
        var echoSum: Float = 0, powerSum: Float = 0
        for k in 0..<binCount {
            echoSum += echo[k]
            powerSum += power[k]
        }
        return powerSum > Self.echolessPowerOverEcho * echoSum
    }

    /// Whether a bin's floor at `current` moves to this frame's `floor`: a fall always; a rise unless it is held (a
    /// talker may be talking) or the frame's smoothed `echo` stands above the floor. A floor of exact zero is a
    /// device's first samples, not a room (no microphone's noise is zero): echo does not hold it where the frame's
    /// power stands clearly over the echo (`isUnexplained`, `unexplainedPowerOverEcho`).
    @inline(__always) private static func takes(_ floor: Float, over current: Float, held: Bool, echo: Float?,
                                                isUnexplained: Bool) -> Bool {
        if floor <= current { return true }
        if held { return false }
        guard let echo, echo > current else { return true }
        return current == 0 && isUnexplained
    }

    /// Adds noise to a spectrum whose bins were scaled by `gains` (0 ... 1): each bin gets the floor's
    /// amplitude times √(1 − g²), in the synthesis scale (`synthesisPowerScale`). Real-time safe.
    public func add(toReal real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>,
                    gains: UnsafePointer<Float>) {
        for k in 0..<binCount {
            let g = min(1, max(0, gains[k]))
            let amplitude = (synthesisPowerScale * noisePower[k] * (1 - g * g)).squareRoot()
            // Two uniform values in -1 ... 1 have mean power 2/3 together; √1.5 makes the bin's power right.
            real[k] += amplitude * 1.2247 * uniform()
            imaginary[k] += amplitude * 1.2247 * uniform()
        }
    }

    private func uniform() -> Float {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Float(Int32(truncatingIfNeeded: state)) / Float(Int32.max)
    }
}
