/// Tells when the echo starts before the linear filter's first tap: the aligner placed the reference too late, and the
/// filter cannot cancel what comes before it.
///
/// The aligner leads the delay estimator's strongest arrival by 20 ms (`EchoAligner`), and moves only when the arrival
/// leaves a window that begins a quarter of the lead after the applied delay. A loudspeaker across the room from the
/// microphone can make a reflection stronger than the direct path: the estimate locked on one 43 ms after it, came back
/// to another 9 ms after it, which left the lead at 5.7 ms, inside the window, and the direct path 4 ms before the
/// filter (our far-speaker f03: the filter took 8-10 dB off in far-end single talk where 20-25 were there to take, and
/// the talker under the echo kept a double-talk STOI of 0.815). Moving the window's edge instead moved rooms whose
/// direct path the filter already held (f05, f09: 3 dB less taken off after the restart it costs).
///
/// The filter's own response tells: a response that begins inside the filter is quiet over its first taps (20-38 dB
/// under its strongest stretch in our scenes, once the filter has taken 4 dB off); one cut at its start has its
/// strongest stretch there (within 2 dB in f03). The watch reads the filter's response at each fit of the late tail
/// (`observe`, half a second apart) and counts the fits whose first `onsetSeconds` hold `cutShare` or more of the
/// energy of the strongest stretch as long, while the filter takes `leastCancellation` (4 dB) or more off the microphone
/// over the far end alone since the last fit. `cutFitCount` such fits in a row count as a cut onset
/// (`cutCount`, which a reader compares with the count it last saw). Before that, and where no echo is found, a
/// filter's first taps are anything: a filter learning from zero, or pulled by a headset's talker, spreads its taps
/// at random for a second or two.
///
/// `add` and `observe` are real-time safe.
struct EchoOnsetWatch {
    /// Onsets found cut so far: a reader compares it with the count it last saw.
    private(set) var cutCount = 0
    /// Frames of the stretch compared: `onsetSeconds` at the filter's rate.
    private let onsetFrames: Int
    private var cutFits = 0
    private var farEndMicrophoneEnergy: Float = 0
    private var farEndErrorEnergy: Float = 0

    /// The stretch compared, the filter's first taps against its strongest stretch as long.
    private static var onsetSeconds: Double { 0.0025 }
    /// The share of the strongest stretch's energy the first taps hold in a cut onset (−4 dB).
    private static var cutShare: Double { 0.4 }
    /// Fits in a row (half a second apart) that must find the onset cut.
    private static var cutFitCount: Int { 4 }
    /// What the filter must take off the microphone over the far end alone for its response to count (4 dB).
    private static var leastCancellation: Float { 2.5 }

    init(sampleRate: Int) {
        onsetFrames = max(1, Int(Double(sampleRate) * Self.onsetSeconds))
    }

    /// One block's microphone power and the filter's output power, counted while the far end plays alone.
    mutating func add(microphonePower: Float, errorPower: Float, isFarEndAlone: Bool) {
        guard isFarEndAlone else { return }
        farEndMicrophoneEnergy += microphonePower
        farEndErrorEnergy += errorPower
    }

    /// One fit: the filter's impulse response (`EchoCanceller.impulseResponse(into:)`), and whether an echo was found.
    mutating func observe(taps: UnsafeBufferPointer<Int32>, isEchoFound: Bool) {
        let isCancelling = farEndMicrophoneEnergy > Self.leastCancellation * farEndErrorEnergy
        farEndMicrophoneEnergy = 0
        farEndErrorEnergy = 0
        guard isEchoFound, isCancelling, taps.count > 2 * onsetFrames else {
            cutFits = 0
            return
        }
        // Energy of every stretch of `onsetFrames` taps, as a running sum; the first stretch is the onset's.
        var running: Double = 0, onset: Double = 0, strongest: Double = 0
        for index in 0..<taps.count {
            let tap = Double(taps[index])
            running += tap * tap
            if index >= onsetFrames {
                let leaving = Double(taps[index - onsetFrames])
                running -= leaving * leaving
            }
            if index == onsetFrames - 1 { onset = running }
            if index >= onsetFrames - 1 { strongest = max(strongest, running) }
        }
        cutFits = strongest > 0 && onset >= Self.cutShare * strongest ? cutFits + 1 : 0
        if cutFits >= Self.cutFitCount {
            cutCount += 1
            cutFits = 0
        }
    }

    /// Forgets the fits counted (the filter starts over). Real-time safe.
    mutating func restart() {
        cutFits = 0
        farEndMicrophoneEnergy = 0
        farEndErrorEnergy = 0
    }
}
