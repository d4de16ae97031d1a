/// What a device's microphone heard in the period being exchanged, component by component (mean squares), when
/// the device knows it (a simulated room mixes the components itself): ground truth for gating echo reduction
/// measurements on the periods where the near talker is silent.
public struct EchoGroundTruth: Sendable, Hashable {
    /// The echo of the loudspeaker, as it reaches the microphone.
    public var echoMeanSquare: Float
    /// The near-end talker alone.
    public var nearTalkerMeanSquare: Float
    /// The microphone signal delivered: echo, near talker and noise.
    public var microphoneMeanSquare: Float

    /// The near talker counts as silent when at least this far (30 dB) below the echo.
    public static let nearTalkerSilentRatio: Float = 1e-3

    public init(echoMeanSquare: Float, nearTalkerMeanSquare: Float, microphoneMeanSquare: Float) {
        self.echoMeanSquare = echoMeanSquare
        self.nearTalkerMeanSquare = nearTalkerMeanSquare
        self.microphoneMeanSquare = microphoneMeanSquare
    }

    /// Echo loud enough to measure and no near talker: the period measures echo reduction. Real-time safe.
    public var gate: ERLEMeter.Gate {
        if echoMeanSquare < ERLEMeter.minimumEchoMeanSquare { return .quietReference }
        if nearTalkerMeanSquare > echoMeanSquare * Self.nearTalkerSilentRatio { return .nearTalker }
        return .echo
    }
}

/// A device that knows its microphone's components (`EchoGroundTruth`) for the period being exchanged.
public protocol EchoGroundTruthSource: AnyObject, Sendable {
    /// The period being exchanged: read it on the device thread inside the I/O cycle (e.g. from the unit's input
    /// callback). Real-time safe.
    var periodGroundTruth: EchoGroundTruth { get }
}
