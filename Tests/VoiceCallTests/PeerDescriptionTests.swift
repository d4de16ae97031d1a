import Testing
@testable import VoiceCall

@Suite struct PeerDescriptionTests {
    /// What `voicepeer sdp --srtp` writes reads back: address, payload type, Opus parameters, rtcp-mux, keys.
    @Test func readsWhatItWrites() throws {
        let keys = SRTPSuite.allCases.enumerated().map { SDPCrypto(tag: $0.offset + 1, key: .random(suite: $0.element)) }
        let written = SessionDescription(
            destination: try SocketAddress.resolve("[::1]:7004"), origin: try SocketAddress.resolve("[::1]:7004"),
            payloadType: 120, format: try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 40),
            bitsPerSecond: 24000, inbandFEC: true, dtx: false, sessionID: 1, crypto: keys)
        #expect(written.text.contains("m=audio 7004 RTP/SAVP 120\r\n"))
        let read = try PeerDescription(parsing: written.text)
        #expect(read.address == (try SocketAddress.resolve("[::1]:7004")))
        #expect(read.payloadType == 120 && read.rtcpMux && read.isSecure)
        #expect(read.opus.useInbandFEC == true && read.opus.useDTX == false && read.opus.stereo == false)
        #expect(read.opus.maxPlaybackRate == 16000 && read.opus.packetMilliseconds == 40)
        #expect(read.crypto == keys)
    }

    /// ffmpeg's own SDP for its Opus stream: payload type 97, LF line ends, no a=rtcp-mux.
    @Test func readsFFmpegsDescription() throws {
        let text = """
            v=0
            o=- 0 0 IN IP4 127.0.0.1
            s=No Name
            c=IN IP4 127.0.0.1
            t=0 0
            a=tool:libavformat 59.27.100
            m=audio 5004 RTP/AVP 97
            b=AS:64
            a=rtpmap:97 opus/48000/2
            a=fmtp:97 sprop-stereo=0

            """
        let read = try PeerDescription(parsing: text)
        #expect(read.payloadType == 97 && read.address.port == 5004 && !read.rtcpMux && !read.isSecure)
        #expect(read.opus == OpusParameters())
        // Its SRTP description keeps RTP/AVP and adds a=crypto: taken as SRTP.
        let secure = try PeerDescription(parsing: text + "a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd\n")
        #expect(secure.isSecure && secure.crypto.count == 1)
    }

    /// The first Opus type in the m= line's order wins; video sections and other codecs are skipped.
    @Test func picksTheFirstOpusTypeOfTheFirstAudioSection() throws {
        let text = "v=0\r\nc=IN IP4 10.0.0.1\r\nm=video 9000 RTP/AVP 96\r\na=rtpmap:96 VP8/90000\r\n"
            + "m=audio 9002 RTP/AVPF 0 109 101\r\na=rtpmap:101 OPUS/48000/2\r\na=rtpmap:109 opus/48000/2\r\n"
            + "a=fmtp:109 useinbandfec=1; usedtx=1\r\na=maxptime:40\r\nm=audio 9004 RTP/AVP 110\r\n"
        let read = try PeerDescription(parsing: text)
        #expect(read.payloadType == 109 && read.address.port == 9002)
        #expect(read.opus.useInbandFEC == true && read.opus.useDTX == true && read.opus.maxPacketMilliseconds == 40)
    }

    /// Each malformed or unsupported description is refused with the line to blame.
    @Test(arguments: [
        ("", "empty"),
        ("v=1\r\n", "line 1: an SDP starts with v=0"),
        ("v=0\r\nX=1\r\n", "line 2: expected TYPE=VALUE"),
        ("v=0\r\ns=a\u{1}b\r\n", "line 2: control character"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\n", "no m=audio line"),
        ("v=0\r\nc=IN IP4 host.example\r\nm=audio 1 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\n", "not a numeric"),
        ("v=0\r\nm=audio 1 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\n", "line 2: no c= line"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 70000 RTP/AVP 96\r\n", "line 3: m=audio port"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 0 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\n", "line 3: m=audio port 0"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 UDP/TLS/RTP/SAVPF 96\r\n", "line 3: profile UDP/TLS/RTP/SAVPF"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 0 8\r\n", "line 3: m=audio offers no payload type mapped"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 96\r\na=rtpmap:96 opus/16000/1\r\n", "line 4: a=rtpmap: Opus must be"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 9\r\na=rtpmap:9 opus/48000/2\r\n", "line 4: Opus payload type 9 is not dynamic"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\na=fmtp:96 useinbandfec=2\r\n", "line 5: useinbandfec must be 0 or 1"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\na=fmtp:96 maxplaybackrate=999999999999\r\n", "line 5: maxplaybackrate must be"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/AVP 96\r\na=rtpmap:96 opus/48000/2\r\na=ptime:0\r\n", "line 5: a=ptime must be"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/SAVP 96\r\na=rtpmap:96 opus/48000/2\r\n", "line 3: RTP/SAVP without an a=crypto"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/SAVP 96\r\na=rtpmap:96 opus/48000/2\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:AAAA\r\n", "line 5: a AES_CM_128_HMAC_SHA1_80 key must be 30 bytes"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/SAVP 96\r\na=rtpmap:96 opus/48000/2\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:!!!!\r\n", "line 5: the key is not base64"),
        ("v=0\r\nc=IN IP4 1.2.3.4\r\nm=audio 5 RTP/SAVP 96\r\na=rtpmap:96 opus/48000/2\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:YUQ1ZVNmMTc0QlhKNDFkNzFJSDlGRUNTS0xrT3NI|2^20|1:4\r\n", "line 5: a=crypto: an MKI"),
        ("v=0\r\n" + String(repeating: "a=x\r\n", count: 1000), "more than 1000 lines"),
    ])
    func refuses(text: String, expected: String) {
        #expect(throws: SDPError.self) { try PeerDescription(parsing: text) }
        do { _ = try PeerDescription(parsing: text) } catch {
            #expect(error.description.hasPrefix(expected) || error.description.contains(expected), "\(error)")
        }
    }

    /// Keys are agreed only when both sides have one; the preferred shared suite wins on both sides.
    @Test func agreesOnKeysOrRefuses() throws {
        let ours = SRTPSuite.allCases.map { SDPCrypto(tag: 1, key: .random(suite: $0)) }
        let theirs = [SDPCrypto(tag: 7, key: .random(suite: .aesCM128HMACSHA1_80))]
        #expect(try SRTPKeys.agree(local: [], remote: []) == nil)
        #expect(throws: SDPError.self) { try SRTPKeys.agree(local: ours, remote: []) }
        #expect(throws: SDPError.self) { try SRTPKeys.agree(local: [], remote: theirs) }
        let keys = try #require(try SRTPKeys.agree(local: ours, remote: theirs))
        #expect(keys.suite == .aesCM128HMACSHA1_80 && keys.receiving == theirs[0].key && keys.sending == ours[0].key)
        #expect(!"\(keys) \(keys.sending) \(String(reflecting: keys.sending)) \(ours[0])".contains(keys.sending.base64))
    }
}
