/// Tells an echo that came back as the linear filter predicts it, only later or sooner, from one it must learn again.
///
/// An audio server that misses a deadline (an xrun) can play a period of silence the application never wrote, or hold
/// a period of capture back, and from then on the echo comes back whole but a period later or sooner than the filter
/// has it. The filter then predicts it no better than a moved path, the misadjustment monitor finds it so, and a filter
/// that starts over in a room that rings learns for seconds, longer under a talker (our far-speaker f11 with its echo a
/// 10.7 ms period later from 7 s on: DT STOI 0.745 over its double talk at 12-20 s, 0.904 without the move).
///
/// So the filter that starts over keeps its old path aside (`EchoPipeline.checkShift`), and over the next
/// `windowFrames` the finder takes the old path's echo estimate and the microphone; then it correlates their whitened
/// spectra at every lag up to `reachFrames` either way (two transforms and one inverse). The old path's estimate of an
/// echo that moved matches the microphone at the move's lag in every bin (0.67-0.75 in `EchoShiftTests`, 0.25-0.29 in
/// f11's ringing room, where the echo from before the move rings on at no lag: 0.11-0.13 there), and the old path comes
/// back moved. A near talker or noise match it at no lag. A loudspeaker moved in a room can match it at its direct
/// sound's new lag too (17 of the 26 restarts in our 125 tuning scenes read 0.15-0.35 there): the filter then starts
/// from its old path moved instead of from nothing and learns on from it, and those scenes' figures stayed within
/// 0.6 dB of ERLE and 0.005 of PESQ of a restart's, their re-convergence the same.
///
/// `init` allocates; `add`, `restart` and `findShift` are real-time safe (no allocation, no locks).
final class EchoShiftFinder {
    /// The span correlated, in frames: the 200 ms after the filter started over.
    let windowFrames: Int
    /// The largest move looked for, either way, in frames (25 ms: two periods of 10 ms, or one of 21 ms).
    let reachFrames: Int
    /// The least move looked for, in frames (a millisecond: less is a clock's drift, which `EchoPathSlide` follows).
    let leastFrames: Int
    /// The old path's whitened correlation with the microphone at a move's lag must reach this share of the one at no
    /// lag (which a ringing room holds up with the echo from before the move), and at least `leastCorrelation`.
    static var matchingShare: Float { 0.45 }
    static var leastCorrelation: Float { 0.12 }

    private let estimate: UnsafeMutablePointer<Float>
    private let microphone: UnsafeMutablePointer<Float>
    private var next = 0
    private var filledFrames = 0
    private let fft: RealFFT
    private let padded: UnsafeMutablePointer<Float>
    private let estimateReal: UnsafeMutablePointer<Float>, estimateImaginary: UnsafeMutablePointer<Float>
    private let microphoneReal: UnsafeMutablePointer<Float>, microphoneImaginary: UnsafeMutablePointer<Float>
    private let correlation: UnsafeMutablePointer<Float>

    /// Not real-time safe (allocates).
    init(sampleRate: Int) {
        windowFrames = sampleRate / 5
        reachFrames = sampleRate / 40
        leastFrames = max(1, sampleRate / 1000)
        var size = 4
        while size < windowFrames + reachFrames { size *= 2 }
        fft = RealFFT(frameCount: size)
        estimate = .zeroed(windowFrames)
        microphone = .zeroed(windowFrames)
        padded = .zeroed(size)
        estimateReal = .zeroed(fft.binCount); estimateImaginary = .zeroed(fft.binCount)
        microphoneReal = .zeroed(fft.binCount); microphoneImaginary = .zeroed(fft.binCount)
        correlation = .zeroed(size)
    }

    deinit {
        for pointer in [estimate, microphone, padded, estimateReal, estimateImaginary, microphoneReal,
                        microphoneImaginary, correlation] {
            pointer.deallocate()
        }
    }

    /// Takes one block of the filter's echo estimate and of the microphone it saw. Real-time safe.
    func add(estimate block: UnsafeBufferPointer<Float>, microphone heard: UnsafeBufferPointer<Float>) {
        for index in 0..<min(block.count, heard.count) {
            estimate[next] = block[index]
            microphone[next] = heard[index]
            next = next + 1 == windowFrames ? 0 : next + 1
        }
        filledFrames = min(filledFrames + block.count, windowFrames)
    }

    /// Whether a whole window was taken since the last `restart`. Real-time safe.
    var isFull: Bool { filledFrames == windowFrames }

    /// Forgets the blocks taken: the filter started over. Real-time safe.
    func restart() { filledFrames = 0 }

    /// The frames by which the echo now comes later than the filter's estimate (negative: sooner), when the estimate
    /// so moved matches the microphone by `matchingShare` of its match where it is and by `leastCorrelation`; nil
    /// otherwise, or before a whole window was taken. Real-time safe.
    func findShift() -> Int? {
        guard isFull else { return nil }
        let size = fft.frameCount
        let estimateEnergy = transform(estimate, real: estimateReal, imaginary: estimateImaginary)
        let microphoneEnergy = transform(microphone, real: microphoneReal, imaginary: microphoneImaginary)
        guard estimateEnergy > 0, microphoneEnergy > 0 else { return nil }
        // conj(Y)·M, whitened (each bin's phase alone, bins far under the mean magnitude weighed down): the
        // correlation Σ y(t) m(t + τ) of the two spectra's phases at τ (τ ≥ 0) and at size + τ (τ < 0), 1 where the
        // two match at one lag in every bin. Unwhitened, speech's low bins make the peak as broad as a pitch period
        // and the room's ringing of the echo from before the move keeps it at no lag for the first 200 ms.
        var magnitudeSum: Float = 0
        for k in 0..<fft.binCount {
            let yr = estimateReal[k], yi = estimateImaginary[k], mr = microphoneReal[k], mi = microphoneImaginary[k]
            estimateReal[k] = yr * mr + yi * mi
            estimateImaginary[k] = yr * mi - yi * mr
            magnitudeSum += (estimateReal[k] * estimateReal[k] + estimateImaginary[k] * estimateImaginary[k]).squareRoot()
        }
        let floor = 1e-3 * magnitudeSum / Float(fft.binCount)
        for k in 0..<fft.binCount {
            let re = estimateReal[k], im = estimateImaginary[k]
            let weight = 1 / ((re * re + im * im).squareRoot() + floor)
            estimateReal[k] = re * weight
            estimateImaginary[k] = im * weight
        }
        fft.inverse(real: estimateReal, imaginary: estimateImaginary, output: correlation)
        let unmoved = correlation[0]
        // The strongest peak a millisecond or more either side of no lag.
        var moved = 0, movedCorrelation = -Float.infinity
        for distance in leastFrames...reachFrames {
            let later = correlation[distance], sooner = correlation[size - distance]
            if later > movedCorrelation { moved = distance; movedCorrelation = later }
            if sooner > movedCorrelation { moved = -distance; movedCorrelation = sooner }
        }
        guard movedCorrelation >= Self.matchingShare * unmoved, movedCorrelation >= Self.leastCorrelation else { return nil }
        return moved
    }

    /// The window in `ring`, oldest frame first and zero-padded, transformed into `real` and `imaginary`; returns its
    /// energy.
    private func transform(_ ring: UnsafeMutablePointer<Float>, real: UnsafeMutablePointer<Float>,
                           imaginary: UnsafeMutablePointer<Float>) -> Float {
        var energy: Float = 0
        padded.update(repeating: 0, count: fft.frameCount)
        for index in 0..<windowFrames {
            let sample = ring[(next + index) % windowFrames]
            padded[index] = sample
            energy += sample * sample
        }
        fft.forward(padded, real: real, imaginary: imaginary)
        return energy
    }
}
