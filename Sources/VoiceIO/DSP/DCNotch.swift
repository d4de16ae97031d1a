/// The DC notch our echo canceller (`BlockAdaptiveFilter`, like speexdsp's) applies to the microphone before
/// cancelling: a second-order notch at 0 Hz, H(z) = r·(1 − z⁻¹)² / (1 − 2r·z⁻¹ + f·z⁻²) with f = r² + 0.7·(1 − r)², whose radius r speexdsp picks
/// from the sample rate. Reproduced so the canceller's echo estimate can be recovered as
/// y = notch(microphone) − output. Without it, microphone − output also holds the near talker's lowest
/// frequencies, which the notch removed, and the residual echo suppressor would take them for echo.
///
/// Works in the canceller's Int16 sample units. All methods are real-time safe.
struct DCNotch {
    let radius: Float
    fileprivate let feedback: Float
    private var first: Float = 0
    private var second: Float = 0

    /// The radius speexdsp picks for `sampleRate` (set with SPEEX_ECHO_SET_SAMPLING_RATE).
    static func speexRadius(sampleRate: Int) -> Float {
        sampleRate < 12000 ? 0.9 : sampleRate < 24000 ? 0.982 : 0.992
    }

    /// The notch the canceller's output carries, given the microphone goes through `NotchWidener` first: speexdsp's
    /// own from 12 kHz up; below, one as narrow in hertz as speexdsp's at 16 kHz (about 45 Hz), since speexdsp's
    /// 8 kHz notch (r = 0.9) reaches past 100 Hz and turns the phase of a male voice's fundamental by tens of
    /// degrees.
    static func outputRadius(sampleRate: Int) -> Float {
        sampleRate < 12000 ? 1 - (1 - 0.982) * 16000 / Float(sampleRate) : speexRadius(sampleRate: sampleRate)
    }

    /// The notch the processed voice leaves with (`EchoPipeline`'s, through `NotchWidener` from `outputRadius`), at
    /// any rate: 3 dB down at 40 Hz (its radius 2π·28 Hz/rate inside the unit circle). The canceller's own (2π·46
    /// Hz/rate inside it at 16 kHz: 3 dB down at 65 Hz) turns the phase of the voice's lowest octaves (55° at 100 Hz,
    /// 36° at 150 Hz, 18° at 300 Hz; this one 33°, 22°, 11°) and takes 1 dB off at 100 Hz (this one 0.3): the near
    /// talker's least-squares gain lost 0.3-0.4 dB with no echo at all, and the turned talker counted as echo left in
    /// double talk (our yardstick scenes). Narrower still (3 dB down at 20 Hz) it let the room's rumble through under
    /// the far end's low echo, which the residual echo suppressor then took away with it: the background 2 dB lower
    /// while the far end talked (pump scene m04; 1.2 dB at 40 Hz, 0.3 with the canceller's).
    static func voiceRadius(sampleRate: Int) -> Float {
        1 - Float(2 * Double.pi * 28 / Double(sampleRate))
    }

    init(radius: Float) {
        self.radius = radius
        feedback = radius * radius + 0.7 * (1 - radius) * (1 - radius)
    }

    mutating func filter(_ input: Float) -> Float {
        let state = first + input
        first = second + 2 * (radius * state - input)
        second = input - feedback * state
        return radius * state
    }

    /// Feeds the one input that makes this sample's output `output` (the output is `radius` times the input plus
    /// what the state holds) and returns that input.
    mutating func input(producing output: Float) -> Float {
        let input = output / radius - first
        _ = filter(input)
        return input
    }

    /// Forgets the filter state, as the canceller does on `reset`.
    mutating func reset() {
        first = 0
        second = 0
    }
}

/// Turns the canceller's notch into a narrower one: filtering the microphone by P = G / H before the canceller (H its
/// notch, G the one wanted, both with the double zero at DC, so P is a stable biquad without zeros on the unit
/// circle) makes the canceller's output carry G instead of H. Identity when the two radii are equal.
/// All methods are real-time safe.
struct NotchWidener {
    private let gain: Float
    private let numerator1: Float, numerator2: Float
    private let denominator1: Float, denominator2: Float
    private var input1: Float = 0, input2: Float = 0
    private var output1: Float = 0, output2: Float = 0

    /// `applied`: the notch the canceller applies (H); `wanted`: the notch its output should carry (G).
    init(applied: DCNotch, wanted: DCNotch) {
        gain = wanted.radius / applied.radius
        numerator1 = -2 * applied.radius
        numerator2 = applied.feedback
        denominator1 = -2 * wanted.radius
        denominator2 = wanted.feedback
    }

    mutating func filter(_ input: Float) -> Float {
        let output = gain * (input + numerator1 * input1 + numerator2 * input2) - denominator1 * output1
            - denominator2 * output2
        input2 = input1
        input1 = input
        output2 = output1
        output1 = output
        return output
    }

    mutating func reset() {
        input1 = 0; input2 = 0; output1 = 0; output2 = 0
    }
}
