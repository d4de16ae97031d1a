/// The rates, frame durations and RTP clock our Opus streams use: mono voice, one Opus frame per packet.
public struct OpusFormat: Sendable, Hashable, CustomStringConvertible {
    /// Rates libopus encodes and decodes natively, in hertz.
    public static let sampleRates = [8000, 12000, 16000, 24000, 48000]
    /// Frame durations we send, in milliseconds.
    public static let frameDurationsMilliseconds = [10, 20, 40, 60]
    /// RFC 7587: the RTP clock of Opus is 48 kHz whatever the codec's internal rate.
    public static let rtpClockRate = 48000
    public static let bitrateRange = 6000...510_000

    /// Frames per second of the PCM given to the encoder or taken from the decoder.
    public let sampleRate: Int
    /// Duration of one packet in milliseconds.
    public let frameDurationMilliseconds: Int

    /// Throws when Opus does not take `sampleRate` or we do not send frames of that duration.
    public init(sampleRate: Int, frameDurationMilliseconds: Int = 20) throws(OpusError) {
        guard Self.sampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(hertz: sampleRate) }
        guard Self.frameDurationsMilliseconds.contains(frameDurationMilliseconds) else {
            throw .unsupportedFrameDuration(milliseconds: frameDurationMilliseconds)
        }
        self.sampleRate = sampleRate
        self.frameDurationMilliseconds = frameDurationMilliseconds
    }

    /// The lowest rate Opus takes that is at least `hertz` (11025 → 12000), or 48000 above that.
    public static func nearestSupportedRate(atLeast hertz: Int) -> Int {
        sampleRates.first { $0 >= hertz } ?? 48000
    }

    /// PCM frames in one packet at `sampleRate`.
    public var frameCount: Int { sampleRate * frameDurationMilliseconds / 1000 }

    /// RTP timestamp ticks (48 kHz) one packet spans.
    public var rtpTicksPerPacket: UInt32 { UInt32(Self.rtpClockRate * frameDurationMilliseconds / 1000) }

    /// Most PCM frames one Opus packet can decode to (120 ms) at `sampleRate`.
    public static func maxPacketFrameCount(sampleRate: Int) -> Int { sampleRate * 120 / 1000 }

    public var description: String { "Opus \(sampleRate) Hz mono, \(frameDurationMilliseconds) ms frames" }
}
