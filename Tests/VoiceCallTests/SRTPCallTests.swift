import Testing
@testable import VoiceCall

/// Two sessions over real UDP with SRTP: speech gets through when the keys match, nothing when they do not.
@Suite struct SRTPCallTests {
    @Test(arguments: SRTPSuite.available)
    func carriesSpeechOverSRTP(suite: SRTPSuite) throws {
        let key = SRTPMasterKey.random(suite: suite)
        let pair = try CallPair {
            $0.srtp = SRTPKeys(sending: key, receiving: key)
            $0.rtcpIntervalSeconds = 0.5
        }
        try pair.start()
        defer { pair.stop() }
        let sent = TestSignals.voice(sampleRate: 16000, frameCount: 24000)
        let heard = pair.talk(sent, voiceRate: 16000)
        let windows = TestSignals.windowedCorrelations(sent: sent, heard: heard, windowFrames: 4000,
                                                       skipFrames: 4000, maxLagFrames: 4800)
        #expect(TestSignals.median(windows) >= 0.7, "window correlations \(windows)")
        let b = pair.b.statistics
        // RTP and SRTCP reports both ways authenticated and decrypted.
        #expect(b.packetsReceived >= 70 && b.rtcpReceived >= 1 && pair.a.statistics.rtcpReceived >= 1)
        #expect(b.dropped == [.sourceOnProbation: 2], "\(b.dropped)")
    }

    @Test func aWrongKeyPlaysNothing() throws {
        let pair = try CallPair {
            $0.srtp = SRTPKeys(sending: .random(suite: .aesCM128HMACSHA1_80), receiving: .random(suite: .aesCM128HMACSHA1_80))
        }
        try pair.start()
        defer { pair.stop() }
        let heard = pair.talk(TestSignals.voice(sampleRate: 16000, frameCount: 16000), voiceRate: 16000)
        let b = pair.b.statistics
        #expect(b.packetsReceived == 0 && b.dropped(.srtp(.authenticationFailed)) >= 45, "\(b.dropped)")
        #expect(TestSignals.rms(heard[...]) < 0.001)
    }
}
