import CSndFile

/// Why an audio file could not be opened, read or written. Each description is one line naming the path.
public enum AudioFileError: Error, Equatable, CustomStringConvertible {
    /// The path could not be opened (missing, no permission, ...); `reason` is libsndfile's `sf_strerror` text.
    case cannotOpen(path: String, reason: String)
    /// The file is not in an audio format libsndfile recognises.
    case notAudio(path: String)
    /// The file looks like audio but its header is cut short or damaged; `reason` is libsndfile's text.
    case malformed(path: String, reason: String)
    /// The file is readable audio but outside what we handle (rate, channels, layout, encoding).
    case unsupportedFormat(path: String, reason: String)
    case readFailed(path: String, reason: String)
    case writeFailed(path: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let reason): "cannot open \(path): \(reason)"
        case .notAudio(let path): "\(path) is not an audio file libsndfile recognises"
        case .malformed(let path, let reason): "\(path) is a truncated or damaged audio file: \(reason)"
        case .unsupportedFormat(let path, let reason): "\(path): unsupported audio format: \(reason)"
        case .readFailed(let path, let reason): "reading \(path) failed: \(reason)"
        case .writeFailed(let path, let reason): "writing \(path) failed: \(reason)"
        }
    }

    /// Classifies a failed `sf_open` of `path` from libsndfile's last error.
    static func openFailure(path: String) -> AudioFileError {
        let reason = String(cString: sf_strerror(nil))
        switch Int(sf_error(nil)) {
        case SF_ERR_SYSTEM: return .cannotOpen(path: path, reason: reason)
        case SF_ERR_UNRECOGNISED_FORMAT: return .notAudio(path: path)
        case SF_ERR_UNSUPPORTED_ENCODING: return .unsupportedFormat(path: path, reason: reason)
        default: return .malformed(path: path, reason: reason)
        }
    }
}
