/// What a `SimulatedRoom`'s microphone heard in one period, component by component (mean squares, i.e. power
/// per frame): the room mixes them itself, so this is ground truth, e.g. for measuring echo reduction only
/// where the near talker is silent.
public struct RoomPeriodComponents: Sendable, Hashable {
    /// The echo of the loudspeaker, as it reaches the microphone.
    public var echoMeanSquare: Float = 0
    /// The near-end talker alone.
    public var nearTalkerMeanSquare: Float = 0
    /// The microphone signal delivered: echo, near talker and noise.
    public var microphoneMeanSquare: Float = 0

    public init() {}
}
