import VoiceIO

/// Why a simulated room could not be built or run.
public enum SimulatedRoomError: Error, CustomStringConvertible {
    case invalidConfiguration(String)
    case speex(SpeexError)
    case threadFailed(String)
    case notStarted

    public var description: String {
        switch self {
        case .invalidConfiguration(let reason): "simulated room: \(reason)"
        case .speex(let error): "simulated room: \(error)"
        case .threadFailed(let reason): "simulated room: cannot start its clock thread: \(reason)"
        case .notStarted: "simulated room: run(periods:) needs a started room with the virtual clock"
        }
    }
}
