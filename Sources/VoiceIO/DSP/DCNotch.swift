/// The DC notch speexdsp's echo canceller applies to the microphone before cancelling (a second-order notch at
/// 0 Hz whose width depends on the sample rate), reproduced so the canceller's echo estimate can be recovered
/// as y = notch(microphone) − output. Without it, microphone − output also holds the near talker's lowest
/// frequencies, which the notch removed (at 8 kHz that reaches past 100 Hz), and the residual echo suppressor
/// would take them for echo.
///
/// Works in the canceller's Int16 sample units. All methods are real-time safe.
struct DCNotch {
    let radius: Float
    private let feedback: Float
    private var first: Float = 0
    private var second: Float = 0

    /// The radius speexdsp picks for `sampleRate` (set with SPEEX_ECHO_SET_SAMPLING_RATE).
    init(sampleRate: Int) {
        radius = sampleRate < 12000 ? 0.9 : sampleRate < 24000 ? 0.982 : 0.992
        feedback = radius * radius + 0.7 * (1 - radius) * (1 - radius)
    }

    mutating func filter(_ input: Float) -> Float {
        let state = first + input
        first = second + 2 * (radius * state - input)
        second = input - feedback * state
        return radius * state
    }

    /// Forgets the filter state, as speexdsp does on `speex_echo_state_reset`.
    mutating func reset() {
        first = 0
        second = 0
    }
}
