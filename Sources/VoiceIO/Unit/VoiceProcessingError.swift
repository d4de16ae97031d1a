/// Why the unit could not be built or started. Descriptions are one line.
public enum VoiceProcessingError: Error, CustomStringConvertible {
    case format(FormatError)
    case speex(SpeexError)
    case device(name: String, reason: String)
    case notMono(StreamFormat)
    /// A processing block other than `VoiceProcessingSettings.processingBlockDurations`, in milliseconds.
    case unsupportedBlock(milliseconds: Int)

    public var description: String {
        switch self {
        case .format(let error): error.description
        case .speex(let error): error.description
        case .device(let name, let reason): "device \(name): \(reason)"
        case .notMono(let format): "voice format must be mono, not \(format)"
        case .unsupportedBlock(let milliseconds):
            "processing block of \(milliseconds) ms unsupported (use \(VoiceProcessingSettings.processingBlockDurations.map(String.init).joined(separator: " or ")) ms)"
        }
    }
}
