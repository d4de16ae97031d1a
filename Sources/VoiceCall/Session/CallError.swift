import VoiceIO

/// Why a call session could not be built or started. Each case carries the underlying library's words.
public enum CallError: Error, CustomStringConvertible {
    case unsupportedVoiceRate(hertz: Int)
    case codec(OpusError)
    case socket(SocketError)
    case resampler(SpeexError)
    /// libsrtp2 could not set up a context with the keys.
    case srtp(SRTPError)
    /// The network thread could not be started.
    case threadFailed(ThreadStartError)

    public var description: String {
        switch self {
        case .unsupportedVoiceRate(let hertz):
            "voice rate \(hertz) Hz is not supported (use one of \(StreamFormat.voiceRates.map(String.init).joined(separator: ", ")))"
        case .codec(let error): "\(error)"
        case .socket(let error): "\(error)"
        case .resampler(let error): "\(error)"
        case .srtp(let error): "cannot set up SRTP: \(error)"
        case .threadFailed(let error): "cannot start the network thread: \(error)"
        }
    }
}
