import CSpeexDSP

/// Why a speexdsp state (echo canceller, preprocessor, resampler) could not be created or used.
public enum SpeexError: Error, Equatable, CustomStringConvertible {
    /// A parameter was refused before reaching speexdsp; `reason` says which and why.
    case invalidArgument(String)
    /// speexdsp returned no state (out of memory or parameters it cannot handle).
    case stateCreationFailed(String)
    /// The resampler reported `code`; `message` is `speex_resampler_strerror`'s text.
    case resampler(code: Int32, message: String)

    /// A resampler error carrying speexdsp's own words for `code`.
    static func resampler(code: Int32) -> SpeexError {
        .resampler(code: code, message: String(cString: speex_resampler_strerror(code)))
    }

    public var description: String {
        switch self {
        case .invalidArgument(let reason): "speexdsp: invalid argument: \(reason)"
        case .stateCreationFailed(let what): "speexdsp: could not create \(what)"
        case .resampler(let code, let message): "speex resampler error \(code): \(message)"
        }
    }
}

extension SpeexError {
    /// Checks the arguments every speexdsp state shares: a positive block length and a supported rate.
    static func validate(frameCount: Int, sampleRate: Int) throws(SpeexError) {
        guard frameCount > 0, frameCount <= Int(Int32.max) else {
            throw .invalidArgument("frame count \(frameCount) must be positive")
        }
        guard StreamFormat.sampleRateRange.contains(sampleRate) else {
            throw .invalidArgument("sample rate \(sampleRate) Hz is outside \(StreamFormat.sampleRateRange.lowerBound)–\(StreamFormat.sampleRateRange.upperBound) Hz")
        }
    }
}
