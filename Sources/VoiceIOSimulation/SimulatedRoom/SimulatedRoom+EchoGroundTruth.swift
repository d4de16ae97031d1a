import VoiceIO

/// The room mixes its microphone itself: `periodComponents` is the ground truth a call's ERLE meter gates on.
extension SimulatedRoom: EchoGroundTruthSource {}
