#if canImport(Glibc)
import Glibc
#endif

/// Why a ``SimulationSession`` ended early.
public enum SimulationError: Error, Equatable, CustomStringConvertible {
    /// The device reported `failure` after `periodsRun` of `periods` periods; `path` holds the `savedSeconds`
    /// processed until then.
    case deviceFailed(String, periodsRun: Int, periods: Int, path: String, savedSeconds: Double)
    /// The device ran `periodsRun` of `periods` periods in `seconds` seconds of wall-clock time.
    case stalled(device: String, periodsRun: Int, periods: Int, seconds: Int)

    public var description: String {
        switch self {
        case let .deviceFailed(failure, periodsRun, periods, path, savedSeconds):
            "\(failure) (the device failed after \(periodsRun) of \(periods) periods; \(path) holds the \(String(cFormat: "%.2f", savedSeconds)) s processed until then)"
        case let .stalled(device, periodsRun, periods, seconds):
            "\(device) ran \(periodsRun) of \(periods) periods in \(seconds) s: it stopped delivering audio"
        }
    }
}
