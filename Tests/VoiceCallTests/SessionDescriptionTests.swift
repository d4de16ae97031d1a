import Testing
@testable import VoiceCall

@Suite struct SessionDescriptionTests {
    /// The SDP names where the stream goes and signals Opus as RFC 7587 asks (48 kHz, 2 channels, mono fmtp).
    @Test func describesAnOpusStream() throws {
        let description = SessionDescription(
            destination: try SocketAddress.resolve("127.0.0.1:5004"), origin: try SocketAddress.resolve("[::1]:6000"),
            format: try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 20), bitsPerSecond: 24000,
            inbandFEC: true, dtx: false, sessionID: 42)
        let lines = description.text.components(separatedBy: "\r\n")
        #expect(lines.first == "v=0" && lines.last == "")
        #expect(lines.contains("o=- 42 1 IN IP6 ::1"))
        #expect(lines.contains("c=IN IP4 127.0.0.1"))
        #expect(lines.contains("m=audio 5004 RTP/AVP 111"))
        #expect(lines.contains("a=rtpmap:111 opus/48000/2"))
        let fmtp = try #require(lines.first { $0.hasPrefix("a=fmtp:111 ") })
        for parameter in ["useinbandfec=1", "usedtx=0", "stereo=0", "sprop-stereo=0", "maxplaybackrate=16000"] {
            #expect(fmtp.contains(parameter), "\(parameter) missing from \(fmtp)")
        }
    }

    /// The alignment finds a known delay, positive or negative.
    @Test(arguments: [137, -53])
    func alignmentFindsADelay(lag: Int) {
        let signal = TestSignals.voice(sampleRate: 16000, frameCount: 8000)
        let delayed = lag >= 0 ? [Float](repeating: 0, count: lag) + signal : Array(signal.dropFirst(-lag))
        let found = signal.withUnsafeBufferPointer { reference in
            delayed.withUnsafeBufferPointer { SignalAlignment.find(reference: reference, test: $0, lagRange: -400...400) }
        }
        #expect(found.lagFrames == lag && found.correlation > 0.99, "\(found)")
    }
}
