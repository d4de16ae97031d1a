import COpus
import CVoiceShims

/// A mono Opus decoder that owns its libopus state: decodes packets, conceals missing ones (PLC) and recovers
/// a missing frame from the in-band FEC of the packet after it.
///
/// `init` allocates; `decode`, `conceal`, `recover`, `frameCount(ofPacket:)` and `reset` are real-time safe
/// (they write into the caller's buffer). Use from one thread at a time.
public final class OpusDecoder {
    /// Frames per second of the PCM produced.
    public let sampleRate: Int
    private let state: OpaquePointer

    /// Throws when Opus does not decode at `sampleRate`. Not real-time safe.
    public init(sampleRate: Int) throws(OpusError) {
        guard OpusFormat.sampleRates.contains(sampleRate) else { throw .unsupportedSampleRate(hertz: sampleRate) }
        var error: Int32 = OPUS_OK
        guard let state = opus_decoder_create(Int32(sampleRate), 1, &error), error == OPUS_OK else {
            throw .library(function: "opus_decoder_create", code: error)
        }
        self.sampleRate = sampleRate
        self.state = state
    }

    deinit { opus_decoder_destroy(state) }

    /// PCM frames (at `sampleRate`) that `packet` decodes to; throws when it is not a valid Opus packet.
    /// Real-time safe.
    public func frameCount(ofPacket packet: UnsafeRawBufferPointer) throws(OpusError) -> Int {
        guard let base = packet.baseAddress, !packet.isEmpty else {
            throw .library(function: "opus_packet_get_nb_samples", code: OPUS_INVALID_PACKET)
        }
        let result = opus_packet_get_nb_samples(base.assumingMemoryBound(to: UInt8.self), Int32(packet.count), Int32(sampleRate))
        return try OpusError.check(result, "opus_packet_get_nb_samples")
    }

    /// Decodes one packet into `pcm` (room for at least the packet's duration); returns the frames written.
    /// Real-time safe.
    public func decode(_ packet: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        guard let base = packet.baseAddress, !packet.isEmpty else {
            throw .library(function: "opus_decode_float", code: OPUS_INVALID_PACKET)
        }
        return try run(base.assumingMemoryBound(to: UInt8.self), byteCount: packet.count, into: pcm, fec: false)
    }

    /// Packet loss concealment: fills all of `pcm` (a multiple of 2.5 ms) with an extrapolation of the signal,
    /// fading to silence over long gaps. Returns the frames written. Real-time safe.
    public func conceal(into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        try run(nil, byteCount: 0, into: pcm, fec: false)
    }

    /// Recovers the frame lost just before `nextPacket` from its in-band FEC data into all of `pcm` (the lost
    /// frame's duration). Without FEC data in `nextPacket` libopus conceals instead. Decode `nextPacket` itself
    /// normally afterwards. Real-time safe.
    public func recover(fromNext nextPacket: UnsafeRawBufferPointer, into pcm: UnsafeMutableBufferPointer<Float>) throws(OpusError) -> Int {
        guard let base = nextPacket.baseAddress, !nextPacket.isEmpty else { return try conceal(into: pcm) }
        return try run(base.assumingMemoryBound(to: UInt8.self), byteCount: nextPacket.count, into: pcm, fec: true)
    }

    /// Whether `packet` carries in-band FEC (SILK LBRR) data for the frame before it, read from the LBRR flag
    /// that follows the voice-activity flags at the head of its first frame. Real-time safe.
    public static func carriesFEC(_ packet: UnsafeRawBufferPointer) -> Bool {
        guard let base = packet.baseAddress?.assumingMemoryBound(to: UInt8.self), !packet.isEmpty else { return false }
        // Configurations 0–15 are SILK-only and hybrid; CELT-only packets have no LBRR.
        guard base[0] >> 3 < 16 else { return false }
        // opus_packet_parse writes up to 48 frame pointers and sizes; the scratch lives on the stack.
        let firstFrame = withUnsafeTemporaryAllocation(of: UnsafePointer<UInt8>?.self, capacity: 48) { frames in
            withUnsafeTemporaryAllocation(of: Int16.self, capacity: 48) { sizes -> UnsafePointer<UInt8>? in
                var toc: UInt8 = 0
                let count = opus_packet_parse(base, Int32(packet.count), &toc, frames.baseAddress, sizes.baseAddress!, nil)
                return count > 0 && sizes[0] > 0 ? frames[0] : nil
            }
        }
        guard let firstFrame else { return false }
        let frameCount48k = opus_packet_get_samples_per_frame(base, 48000)
        let silkFramesPerOpusFrame = max(1, Int(frameCount48k) / 960)
        return (firstFrame[0] >> (7 - silkFramesPerOpusFrame)) & 1 == 1
    }

    /// Forgets the signal history (a new stream starts). Real-time safe.
    public func reset() throws(OpusError) {
        _ = try OpusError.check(voice_opus_decoder_reset(state), "OPUS_RESET_STATE")
    }

    private func run(_ data: UnsafePointer<UInt8>?, byteCount: Int, into pcm: UnsafeMutableBufferPointer<Float>,
                     fec: Bool) throws(OpusError) -> Int {
        guard let destination = pcm.baseAddress, !pcm.isEmpty else { throw .frameCountMismatch(expected: 1, actual: 0) }
        let result = opus_decode_float(state, data, Int32(byteCount), destination, Int32(pcm.count), fec ? 1 : 0)
        return try OpusError.check(result, "opus_decode_float")
    }
}
