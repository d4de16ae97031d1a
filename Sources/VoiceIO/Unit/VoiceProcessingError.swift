/// Why the unit could not be built or started. Descriptions are one line.
public enum VoiceProcessingError: Error, CustomStringConvertible {
    case format(FormatError)
    case speex(SpeexError)
    case device(name: String, reason: String)
    case notMono(StreamFormat)

    public var description: String {
        switch self {
        case .format(let error): error.description
        case .speex(let error): error.description
        case .device(let name, let reason): "device \(name): \(reason)"
        case .notMono(let format): "voice format must be mono, not \(format)"
        }
    }
}
