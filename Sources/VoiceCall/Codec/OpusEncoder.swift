import COpus
import CVoiceShims

/// A mono Opus encoder in VOIP mode that owns its libopus state.
///
/// `init` and the setters are not real-time safe only in that `init` allocates; `encode` is real-time safe
/// (no allocation, no lock: it writes into the caller's buffer). Use from one thread at a time.
public final class OpusEncoder {
    /// Everything the encoder is told at creation.
    public struct Configuration: Sendable, Hashable {
        public var format: OpusFormat
        public var bitsPerSecond: Int
        /// 0 (cheapest) ... 10 (best).
        public var complexity: Int
        /// In-band forward error correction: each packet also carries a coarse copy of the previous frame.
        public var inbandFEC: Bool
        /// The loss the encoder plans FEC for, 0 ... 100.
        public var expectedPacketLossPercent: Int
        /// Discontinuous transmission: during silence `encode` returns packets of at most 2 bytes, not worth sending.
        public var dtx: Bool

        public init(format: OpusFormat, bitsPerSecond: Int = 24000, complexity: Int = 9, inbandFEC: Bool = false,
                    expectedPacketLossPercent: Int = 0, dtx: Bool = false) {
            self.format = format
            self.bitsPerSecond = bitsPerSecond
            self.complexity = complexity
            self.inbandFEC = inbandFEC
            self.expectedPacketLossPercent = expectedPacketLossPercent
            self.dtx = dtx
        }
    }

    /// Largest packet `encode` writes, in bytes (RFC 6716's limit for one frame).
    public static let maxPacketByteCount = 1275
    /// Encoded packets of at most this many bytes carry no audio (DTX silence) and need not be sent.
    public static let dtxPacketByteCount = 2

    public let configuration: Configuration
    /// The codec's algorithmic delay in frames at the configured rate: decoded audio lags the input by this much.
    public let lookaheadFrameCount: Int
    private let state: OpaquePointer

    /// Creates and configures the encoder; throws on a setting Opus or we refuse. Not real-time safe.
    public init(_ configuration: Configuration) throws(OpusError) {
        guard OpusFormat.bitrateRange.contains(configuration.bitsPerSecond) else {
            throw .bitrateOutOfRange(bitsPerSecond: configuration.bitsPerSecond)
        }
        guard (0...10).contains(configuration.complexity) else { throw .complexityOutOfRange(configuration.complexity) }
        guard (0...100).contains(configuration.expectedPacketLossPercent) else {
            throw .packetLossPercentOutOfRange(configuration.expectedPacketLossPercent)
        }
        var error: Int32 = OPUS_OK
        guard let state = opus_encoder_create(Int32(configuration.format.sampleRate), 1, OPUS_APPLICATION_VOIP, &error),
              error == OPUS_OK
        else { throw .library(function: "opus_encoder_create", code: error) }
        self.state = state
        self.configuration = configuration
        do {
            _ = try OpusError.check(voice_opus_encoder_set_bitrate(state, Int32(configuration.bitsPerSecond)), "OPUS_SET_BITRATE")
            _ = try OpusError.check(voice_opus_encoder_set_complexity(state, Int32(configuration.complexity)), "OPUS_SET_COMPLEXITY")
            _ = try OpusError.check(voice_opus_encoder_set_inband_fec(state, configuration.inbandFEC ? 1 : 0), "OPUS_SET_INBAND_FEC")
            _ = try OpusError.check(
                voice_opus_encoder_set_packet_loss_perc(state, Int32(configuration.expectedPacketLossPercent)),
                "OPUS_SET_PACKET_LOSS_PERC")
            _ = try OpusError.check(voice_opus_encoder_set_dtx(state, configuration.dtx ? 1 : 0), "OPUS_SET_DTX")
            _ = try OpusError.check(voice_opus_encoder_set_signal_voice(state), "OPUS_SET_SIGNAL")
            var lookahead: Int32 = 0
            _ = try OpusError.check(voice_opus_encoder_get_lookahead(state, &lookahead), "OPUS_GET_LOOKAHEAD")
            lookaheadFrameCount = Int(lookahead)
        } catch {
            opus_encoder_destroy(state)
            throw error
        }
    }

    deinit { opus_encoder_destroy(state) }

    /// Encodes exactly one frame (`configuration.format.frameCount` samples, mono, nominally in -1 ... 1) into
    /// `packet`; returns the packet's byte count. At most `dtxPacketByteCount` bytes means DTX silence.
    /// Give `packet` at least `maxPacketByteCount` bytes. Real-time safe.
    public func encode(_ pcm: UnsafeBufferPointer<Float>, into packet: UnsafeMutableRawBufferPointer) throws(OpusError) -> Int {
        let frameCount = configuration.format.frameCount
        guard pcm.count == frameCount, let source = pcm.baseAddress else {
            throw .frameCountMismatch(expected: frameCount, actual: pcm.count)
        }
        guard let destination = packet.baseAddress else { throw .library(function: "opus_encode_float", code: OPUS_BUFFER_TOO_SMALL) }
        let result = opus_encode_float(state, source, Int32(frameCount),
                                       destination.assumingMemoryBound(to: UInt8.self), Int32(min(packet.count, Int(Int32.max))))
        return try OpusError.check(result, "opus_encode_float")
    }

    /// Changes the target bitrate while running. Real-time safe.
    public func setBitrate(bitsPerSecond: Int) throws(OpusError) {
        guard OpusFormat.bitrateRange.contains(bitsPerSecond) else { throw .bitrateOutOfRange(bitsPerSecond: bitsPerSecond) }
        _ = try OpusError.check(voice_opus_encoder_set_bitrate(state, Int32(bitsPerSecond)), "OPUS_SET_BITRATE")
    }

    /// Changes the loss the FEC is planned for (e.g. from RTCP reports). Real-time safe.
    public func setExpectedPacketLoss(percent: Int) throws(OpusError) {
        guard (0...100).contains(percent) else { throw .packetLossPercentOutOfRange(percent) }
        _ = try OpusError.check(voice_opus_encoder_set_packet_loss_perc(state, Int32(percent)), "OPUS_SET_PACKET_LOSS_PERC")
    }

    /// Forgets the signal history, as at creation. Real-time safe.
    public func reset() throws(OpusError) {
        _ = try OpusError.check(voice_opus_encoder_reset(state), "OPUS_RESET_STATE")
    }
}
