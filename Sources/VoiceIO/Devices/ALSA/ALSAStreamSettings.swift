import CALSA

/// Which way a PCM moves frames.
public enum ALSADirection: String, Sendable, Hashable {
    case playback
    case capture

    var stream: snd_pcm_stream_t { self == .playback ? SND_PCM_STREAM_PLAYBACK : SND_PCM_STREAM_CAPTURE }
}

/// What to ask a PCM for. Preferences are tried in order; the first the PCM accepts wins.
public struct ALSAHardwareRequest: Sendable, Hashable {
    /// Frames per second asked for.
    public var sampleRate: Int
    /// Whether the PCM must give exactly `sampleRate` (the second side of a duplex pair must match the first).
    public var requiresExactRate: Bool
    /// Frames per period asked for (the I/O cycle size).
    public var periodFrames: Int
    /// Frames of ring buffer asked for.
    public var bufferFrames: Int
    /// Sample types in order of preference (`int16` is S16_LE, `float32` is FLOAT_LE), interleaved.
    public var sampleTypes: [SampleType]
    /// Channel counts in order of preference (1 or 2); the device mixes down to / copies up from mono.
    public var channelCounts: [Int]

    public init(sampleRate: Int, requiresExactRate: Bool = false, periodFrames: Int, bufferFrames: Int,
                sampleTypes: [SampleType] = [.int16, .float32], channelCounts: [Int] = [1, 2]) {
        self.sampleRate = sampleRate
        self.requiresExactRate = requiresExactRate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
        self.sampleTypes = sampleTypes
        self.channelCounts = channelCounts
    }
}

/// What a PCM actually gave after negotiation.
public struct ALSAStreamSettings: Sendable, Hashable, CustomStringConvertible {
    public let deviceName: String
    public let direction: ALSADirection
    /// Rate, channel count and sample type, always interleaved.
    public let format: StreamFormat
    /// Frames per period the PCM settled on.
    public let periodFrames: Int
    /// Frames in the PCM's ring buffer.
    public let bufferFrames: Int

    public var description: String {
        "\(direction.rawValue) alsa:\(deviceName): \(format), period \(periodFrames) frames, buffer \(bufferFrames) frames"
    }
}

extension SampleType {
    /// The interleaved little-endian ALSA format for this sample type.
    var alsaFormat: snd_pcm_format_t { self == .int16 ? SND_PCM_FORMAT_S16_LE : SND_PCM_FORMAT_FLOAT_LE }
}
