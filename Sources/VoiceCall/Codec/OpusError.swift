import COpus

/// Why the Opus codec refused a setting or a call.
///
/// Library failures carry libopus's own message (`opus_strerror`) and the function that failed. Constructing
/// and throwing one does not allocate (typed throws, static strings), so the real-time paths may throw it.
public enum OpusError: Error, CustomStringConvertible {
    /// A libopus call returned the negative error `code`.
    case library(function: StaticString, code: Int32)
    case unsupportedSampleRate(hertz: Int)
    case unsupportedFrameDuration(milliseconds: Int)
    case bitrateOutOfRange(bitsPerSecond: Int)
    case complexityOutOfRange(Int)
    case packetLossPercentOutOfRange(Int)
    /// The caller's PCM buffer does not hold the frame count the call needs.
    case frameCountMismatch(expected: Int, actual: Int)

    /// Turns a negative libopus return value into a thrown error; passes counts through.
    @inline(__always)
    static func check(_ result: Int32, _ function: StaticString) throws(OpusError) -> Int {
        guard result >= 0 else { throw .library(function: function, code: result) }
        return Int(result)
    }

    /// libopus's words for `code`.
    public static func message(code: Int32) -> String { String(cString: opus_strerror(code)) }

    public var description: String {
        switch self {
        case .library(let function, let code): "\(function): \(Self.message(code: code)) (\(code))"
        case .unsupportedSampleRate(let hz):
            "Opus does not take \(hz) Hz (use one of \(OpusFormat.sampleRates.map(String.init).joined(separator: ", ")))"
        case .unsupportedFrameDuration(let ms):
            "Opus frames of \(ms) ms are not supported (use one of \(OpusFormat.frameDurationsMilliseconds.map(String.init).joined(separator: ", ")))"
        case .bitrateOutOfRange(let bps): "bitrate \(bps) bit/s is outside \(OpusFormat.bitrateRange.lowerBound)–\(OpusFormat.bitrateRange.upperBound)"
        case .complexityOutOfRange(let value): "complexity \(value) is outside 0–10"
        case .packetLossPercentOutOfRange(let value): "expected packet loss \(value)% is outside 0–100"
        case .frameCountMismatch(let expected, let actual): "expected \(expected) frames, got a buffer of \(actual)"
        }
    }
}
