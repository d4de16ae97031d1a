import COpus
import CVoiceShims
import Testing

@Suite struct OpusShimTests {
    /// The variadic ctl shims reach libopus: a bitrate set through one is read back through another.
    @Test func setsAndReadsBitrate() throws {
        var error: Int32 = 0
        let encoder = try #require(opus_encoder_create(16000, 1, OPUS_APPLICATION_VOIP, &error))
        defer { opus_encoder_destroy(encoder) }
        #expect(voice_opus_encoder_set_bitrate(encoder, 24000) == OPUS_OK)
        var bitrate: Int32 = 0
        #expect(voice_opus_encoder_get_bitrate(encoder, &bitrate) == OPUS_OK)
        #expect(bitrate == 24000)
        #expect(voice_opus_encoder_set_complexity(encoder, 42) == OPUS_BAD_ARG)
    }
}
