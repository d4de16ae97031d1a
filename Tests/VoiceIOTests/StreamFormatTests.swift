import Testing
@testable import VoiceIO

@Suite struct StreamFormatTests {
    @Test func derivesSizesAndDurations() throws {
        let stereo = try StreamFormat(sampleRate: 48000, channelCount: 2, sampleType: .int16, isInterleaved: true)
        #expect(stereo.bytesPerFrame == 4)
        #expect(stereo.frameCount(milliseconds: 10) == 480)
        #expect(stereo.byteCount(frameCount: 480) == 1920)
        #expect(stereo.sampleCount(frameCount: 480) == 960)
        #expect(stereo.milliseconds(frameCount: 960) == 20)
        let planar = try StreamFormat(sampleRate: 44100, channelCount: 2, sampleType: .float32, isInterleaved: false)
        #expect(planar.bytesPerFrame == 4)
    }

    @Test func refusesBadFormats() {
        #expect(throws: FormatError.sampleRateOutOfRange(hertz: 0)) { try StreamFormat(sampleRate: 0) }
        #expect(throws: FormatError.sampleRateOutOfRange(hertz: 1_000_000)) { try StreamFormat(sampleRate: 1_000_000) }
        #expect(throws: FormatError.channelCountOutOfRange(0)) { try StreamFormat(sampleRate: 16000, channelCount: 0) }
        #expect(throws: FormatError.channelCountOutOfRange(33)) { try StreamFormat(sampleRate: 16000, channelCount: 33) }
        #expect(throws: FormatError.self) { try StreamFormat.voice(sampleRate: 22050) }
        #expect(throws: FormatError.framesNotWhole(milliseconds: 10, hertz: 11025)) {
            try StreamFormat(sampleRate: 11025).exactFrameCount(milliseconds: 10)
        }
    }

    @Test func acceptsEveryVoiceRate() throws {
        for rate in StreamFormat.voiceRates {
            let format = try StreamFormat.voice(sampleRate: rate, sampleType: .int16)
            #expect(format.sampleRate == rate && format.channelCount == 1)
        }
    }

    @Test func errorsReadWell() {
        let text = String(describing: FormatError.unsupportedVoiceRate(hertz: 22050, supported: [8000, 16000]))
        #expect(text == "voice rate 22050 Hz is not supported (use one of 8000, 16000)")
    }
}
