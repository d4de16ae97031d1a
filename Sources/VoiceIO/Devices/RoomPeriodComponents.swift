/// What a simulated device's microphone heard in one period, component by component (mean squares, i.e. power
/// per frame): a simulated room (`VoiceIOSimulation.SimulatedRoom`) mixes them itself, so this is ground truth,
/// e.g. for measuring echo reduction only where the near talker is silent. It lives beside `AudioDevice` so that
/// meters can take it without depending on the simulation.
public struct RoomPeriodComponents: Sendable, Hashable {
    /// The echo of the loudspeaker, as it reaches the microphone.
    public var echoMeanSquare: Float = 0
    /// The near-end talker alone.
    public var nearTalkerMeanSquare: Float = 0
    /// The microphone signal delivered: echo, near talker and noise.
    public var microphoneMeanSquare: Float = 0

    public init() {}
}
