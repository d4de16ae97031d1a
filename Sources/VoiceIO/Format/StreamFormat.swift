/// How one sample is stored.
public enum SampleType: String, Sendable, Hashable, CaseIterable {
    case int16
    case float32

    /// Bytes taken by one sample of one channel.
    public var bytesPerSample: Int {
        switch self {
        case .int16: 2
        case .float32: 4
        }
    }
}

/// Why a stream format was refused.
public enum FormatError: Error, Equatable, CustomStringConvertible {
    case sampleRateOutOfRange(hertz: Int)
    case unsupportedVoiceRate(hertz: Int, supported: [Int])
    case channelCountOutOfRange(Int)
    case framesNotWhole(milliseconds: Double, hertz: Int)

    public var description: String {
        switch self {
        case .sampleRateOutOfRange(let hz):
            "sample rate \(hz) Hz is outside \(StreamFormat.sampleRateRange.lowerBound)–\(StreamFormat.sampleRateRange.upperBound) Hz"
        case .unsupportedVoiceRate(let hz, let supported):
            "voice rate \(hz) Hz is not supported (use one of \(supported.map(String.init).joined(separator: ", ")))"
        case .channelCountOutOfRange(let count):
            "channel count \(count) is outside 1–\(StreamFormat.maxChannelCount)"
        case .framesNotWhole(let ms, let hz):
            "\(ms) ms is not a whole number of frames at \(hz) Hz"
        }
    }
}

/// A validated description of an audio stream: rate, channels, sample type and layout.
///
/// Words are used strictly: a *sample* is one value of one channel, a *frame* is one sample of every channel at
/// one instant, so a mono stream has as many samples as frames. Durations are in milliseconds and say so.
public struct StreamFormat: Sendable, Hashable, CustomStringConvertible {
    /// Rates any stream may have, in hertz.
    public static let sampleRateRange = 1000...768_000
    public static let maxChannelCount = 32
    /// Rates an app may choose for its voice (element 1 output, element 0 input).
    public static let voiceRates = [8000, 11025, 12000, 16000, 24000, 48000]

    /// Frames per second.
    public let sampleRate: Int
    public let channelCount: Int
    public let sampleType: SampleType
    /// Interleaved: one buffer holding frames one after another. Otherwise one buffer per channel.
    public let isInterleaved: Bool

    public init(sampleRate: Int, channelCount: Int = 1, sampleType: SampleType = .float32,
                isInterleaved: Bool = true) throws(FormatError) {
        guard Self.sampleRateRange.contains(sampleRate) else { throw .sampleRateOutOfRange(hertz: sampleRate) }
        guard (1...Self.maxChannelCount).contains(channelCount) else { throw .channelCountOutOfRange(channelCount) }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.sampleType = sampleType
        self.isInterleaved = channelCount == 1 ? true : isInterleaved
    }

    /// A mono voice format at one of `voiceRates`.
    public static func voice(sampleRate: Int, sampleType: SampleType = .float32) throws(FormatError) -> StreamFormat {
        guard voiceRates.contains(sampleRate) else {
            throw .unsupportedVoiceRate(hertz: sampleRate, supported: voiceRates)
        }
        return try StreamFormat(sampleRate: sampleRate, channelCount: 1, sampleType: sampleType)
    }

    /// Bytes one frame takes in one buffer: all channels when interleaved, one channel otherwise.
    public var bytesPerFrame: Int {
        isInterleaved ? sampleType.bytesPerSample * channelCount : sampleType.bytesPerSample
    }

    /// Frames in `milliseconds`, rounded down.
    public func frameCount(milliseconds: Double) -> Int {
        Int((milliseconds * Double(sampleRate) / 1000).rounded(.down))
    }

    /// Frames in exactly `milliseconds`; throws when that is not a whole number of frames (e.g. 10 ms at 11025 Hz).
    public func exactFrameCount(milliseconds: Double) throws(FormatError) -> Int {
        let frames = milliseconds * Double(sampleRate) / 1000
        guard frames == frames.rounded() else { throw .framesNotWhole(milliseconds: milliseconds, hertz: sampleRate) }
        return Int(frames)
    }

    /// Duration of `frames` frames in milliseconds.
    public func milliseconds(frameCount frames: Int) -> Double {
        Double(frames) * 1000 / Double(sampleRate)
    }

    /// Bytes taken by `frames` frames in one buffer.
    public func byteCount(frameCount frames: Int) -> Int { frames * bytesPerFrame }

    /// Samples (values) in `frames` frames across all channels.
    public func sampleCount(frameCount frames: Int) -> Int { frames * channelCount }

    public var description: String {
        let layout = channelCount == 1 ? "mono" : "\(channelCount) ch \(isInterleaved ? "interleaved" : "planar")"
        return "\(sampleRate) Hz \(layout) \(sampleType.rawValue)"
    }
}
