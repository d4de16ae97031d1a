extension RoomPeriodComponents {
    /// The near talker counts as silent when at least this far (30 dB) below the echo.
    public static let nearTalkerSilentRatio: Float = 1e-3

    /// Echo loud enough to measure and no near talker: the period measures echo reduction. Real-time safe.
    public var erleGate: ERLEMeter.Gate {
        if echoMeanSquare < ERLEMeter.minimumEchoMeanSquare { return .quietReference }
        if nearTalkerMeanSquare > echoMeanSquare * Self.nearTalkerSilentRatio { return .nearTalker }
        return .echo
    }
}

/// A device that knows its microphone's components (`RoomPeriodComponents`) for the period being exchanged, such
/// as a simulated room: ground truth for a call's ERLE meter.
public protocol EchoGroundTruthSource: AnyObject, Sendable {
    /// The period being exchanged: read it on the device thread inside the I/O cycle (e.g. from the unit's input
    /// callback). Real-time safe.
    var periodComponents: RoomPeriodComponents { get }
}
