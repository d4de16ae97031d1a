
extension SimulatedRoom: EchoGroundTruthSource {
    /// The room's own mix of the period being exchanged. Real-time safe.
    public var periodGroundTruth: EchoGroundTruth {
        let components = periodComponents
        return EchoGroundTruth(echoMeanSquare: components.echoMeanSquare,
                               nearTalkerMeanSquare: components.nearTalkerMeanSquare,
                               microphoneMeanSquare: components.microphoneMeanSquare)
    }
}
