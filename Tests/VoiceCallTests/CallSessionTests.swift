import CAllocCounter
import Foundation
import VoiceIO
import VoiceIOSimulation
import Testing
@testable import VoiceCall

/// Two in-process sessions over real UDP on 127.0.0.1, their audio sides driven in real time in 10 ms periods.
@Suite struct CallSessionTests {
    /// Speech A captures comes out of B: every 250 ms window matches at some lag (the call's delay).
    @Test(arguments: [16000, 11025])
    func carriesSpeechEndToEnd(voiceRate: Int) throws {
        let pair = try CallPair(voiceRate: voiceRate)
        try pair.start()
        defer { pair.stop() }
        let sent = TestSignals.voice(sampleRate: voiceRate, frameCount: voiceRate * 3 / 2)
        let heard = pair.talk(sent, voiceRate: voiceRate)
        let windows = TestSignals.windowedCorrelations(sent: sent, heard: heard, windowFrames: voiceRate / 4,
                                                       skipFrames: voiceRate / 4, maxLagFrames: voiceRate * 3 / 10)
        #expect(TestSignals.median(windows) >= 0.7, "window correlations \(windows)")
        let a = pair.a.statistics, b = pair.b.statistics
        #expect(a.packetsSent >= 70 && a.sendErrors == 0, "A sent \(a.packetsSent)")
        #expect(b.packetsReceived >= a.packetsSent - 2 && b.remoteSSRC == a.localSSRC)
        // Only the packets that put A's SSRC on probation before B latched it.
        #expect(b.dropped == [.sourceOnProbation: 2] && b.packetsLost == 0, "\(b.dropped)")
        #expect(b.jitterBuffer.received >= 60 && b.jitterBuffer.delayMilliseconds < 200)
    }

    /// Loss, duplication, reordering and jitter between the two: B keeps rendering voice (loss concealed),
    /// and its statistics count what happened.
    @Test func concealsAndCountsImpairments() throws {
        var relay: ImpairmentRelay?
        let pair = try CallPair(relay: { a, b in
            relay = try ImpairmentRelay(between: a, and: b, impairment: .init(
                lossPercent: 8, duplicatePercent: 5, reorderPercent: 5, jitterMilliseconds: 15, seed: 11))
            return relay!.address
        })
        try pair.start()
        let sent = TestSignals.voice(sampleRate: 16000, frameCount: 32000)
        let heard = pair.talk(sent, voiceRate: 16000)
        pair.stop()
        relay?.stop()
        let impaired = try #require(relay)
        #expect(impaired.dropped >= 3 && impaired.duplicated >= 1 && impaired.reordered >= 1,
                "relay dropped \(impaired.dropped), duplicated \(impaired.duplicated), reordered \(impaired.reordered)")

        let b = pair.b.statistics
        #expect(b.packetsLost >= 1, "network loss \(b.packetsLost)")
        #expect(b.jitterBuffer.lost >= impaired.dropped / 2, "jitter buffer \(b.jitterBuffer)")
        #expect(b.jitterBuffer.concealed + b.jitterBuffer.fecRecovered == b.jitterBuffer.lost)
        #expect(b.jitterBuffer.duplicates + b.jitterBuffer.late >= 1)
        #expect(b.jitterMilliseconds > 1, "jitter \(b.jitterMilliseconds) ms")
        #expect(b.droppedTotal == b.dropped(.sourceOnProbation) && b.droppedTotal <= 10, "\(b.dropped)")

        // Rendering never stops: after the start-up, 20 ms windows under the voice are nearly all audible.
        let reference = TestSignals.rms(sent[...])
        let windowFrames = 320
        let levels = stride(from: 8000, to: sent.count, by: windowFrames).map { TestSignals.rms(heard[$0..<($0 + windowFrames)]) }
        let audible = levels.filter { $0 > 0.1 * reference }.count
        #expect(Double(audible) >= 0.9 * Double(levels.count), "\(audible) of \(levels.count) windows audible")
        let windows = TestSignals.windowedCorrelations(sent: sent, heard: heard, windowFrames: 4000, skipFrames: 4000,
                                                       maxLagFrames: 6400)
        #expect(TestSignals.median(windows) >= 0.5, "window correlations \(windows)")
    }

    /// A third socket's packets and a foreign SSRC from the right address are never played; once the latched
    /// source has been silent long enough a new SSRC is a sender restart and is played.
    @Test func playsOnlyTheRemoteAndItsLatchedSource() throws {
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        let stranger = try UDPSocket(binding: "127.0.0.1:0")
        var configuration = CallConfiguration(remote: remote.localAddress)
        configuration.sourceRestartSilenceSeconds = 0.3
        let session = try CallSession(socket: local, configuration: configuration)
        try session.start()
        defer { session.stop() }
        var out = [Float](repeating: 0, count: 160)
        func render(_ periods: Int) -> [Float] {
            var all: [Float] = []
            for _ in 0..<periods {
                out.withUnsafeMutableBufferPointer { session.renderReceived(into: $0) }
                all += out
            }
            return all
        }
        let tone = (0..<16000).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 16000)) }
        let silence = [Float](repeating: 0, count: 16000)

        var strangerStream = try RTPStreamFixture(ssrc: 0x5757)
        for packet in try strangerStream.packets(Array(tone[..<8000])) { try stranger.send(packet, to: local.localAddress) }
        #expect(waitUntil { session.statistics.dropped(.wrongSource) == 25 })
        #expect(render(30).allSatisfy { $0 == 0 }, "a stranger's packets were played")

        var latched = try RTPStreamFixture(ssrc: 0x1111)
        var foreign = try RTPStreamFixture(ssrc: 0x2222)
        let quiet = try latched.packets(silence)
        let loud = try foreign.packets(tone)
        for packet in quiet[..<10] { try remote.send(packet, to: local.localAddress) }
        // The first two are on probation; the third latches the source.
        #expect(waitUntil { session.statistics.packetsReceived == 8 && session.statistics.dropped(.sourceOnProbation) == 2 })
        for index in 0..<20 {
            try remote.send(loud[index], to: local.localAddress)
            try remote.send(quiet[10 + index], to: local.localAddress)
        }
        #expect(waitUntil { session.statistics.packetsReceived == 28 && session.statistics.dropped(.foreignSSRC) == 20 })
        let whileLatched = render(40)
        #expect(TestSignals.rms(whileLatched[...]) < 0.001, "a foreign SSRC was played")
        #expect(session.statistics.remoteSSRC == 0x1111)

        usleep(400_000)
        for packet in loud[20..<40] { try remote.send(packet, to: local.localAddress) }
        #expect(waitUntil { session.statistics.sourceTakeovers == 1 && session.statistics.packetsReceived == 46 })
        let afterRestart = render(40)
        #expect(TestSignals.rms(afterRestart[...]) > 0.1, "the restarted source was not played")
        #expect(session.statistics.remoteSSRC == 0x2222)
    }

    /// A spoofer sending from the remote's address before the call starts, and on while it starts: tone packets
    /// each with a new SSRC, and a fixed SSRC whose sequence numbers jump at random. Neither passes probation,
    /// so the remote's real stream (silence) is latched and nothing of the tone is played. After an outage the
    /// real SSRC resuming keeps the stream even though a spoofer's stream had begun its probation.
    @Test func aSpooferThatStartsFirstDoesNotTakeTheStream() throws {
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        var configuration = CallConfiguration(remote: remote.localAddress)
        configuration.sourceRestartSilenceSeconds = 0.2
        let session = try CallSession(socket: local, configuration: configuration)
        try session.start()
        defer { session.stop() }
        var out = [Float](repeating: 0, count: 160)
        func rendered(_ periods: Int) -> Double {
            var all: [Float] = []
            for _ in 0..<periods {
                out.withUnsafeMutableBufferPointer { session.renderReceived(into: $0) }
                all += out
            }
            return TestSignals.rms(all[...])
        }
        func send(_ packet: [UInt8]) throws {
            try remote.send(packet, to: local.localAddress)
            usleep(1000)
        }
        let tone = (0..<32000).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 16000)) }
        var spoofer = try RTPStreamFixture(ssrc: 0x5353)
        var generator = SystemRandomNumberGenerator()
        let spoofed = try spoofer.packets(tone).enumerated().map { index, packet in
            var packet = packet
            if index % 2 == 0 {
                withUnsafeBytes(of: UInt32.random(in: 1 ... .max, using: &generator).bigEndian) { packet.replaceSubrange(8..<12, with: $0) }
            } else {
                withUnsafeBytes(of: UInt16.random(in: 0 ... .max, using: &generator).bigEndian) { packet.replaceSubrange(2..<4, with: $0) }
            }
            return packet
        }
        var real = try RTPStreamFixture(ssrc: 0x1111)
        let quiet = try real.packets([Float](repeating: 0, count: 16000))

        for packet in spoofed[..<20] { try send(packet) }
        #expect(waitUntil { session.statistics.dropped(.sourceOnProbation) == 20 })
        #expect(session.statistics.remoteSSRC == nil && session.statistics.packetsReceived == 0)
        for index in 0..<20 {
            try send(spoofed[20 + 2 * index])
            try send(quiet[index])
            try send(spoofed[21 + 2 * index])
        }
        #expect(waitUntil { session.statistics.packetsReceived == 18 && session.statistics.droppedTotal == 62 })
        #expect(session.statistics.remoteSSRC == 0x1111)
        #expect(rendered(60) < 0.001, "the spoofer's tone was played")

        // An outage longer than the restart silence; a well-formed stream starts its probation, the real resumes.
        usleep(300_000)
        var consistent = try RTPStreamFixture(ssrc: 0x5454)
        for packet in try consistent.packets(Array(tone[..<640])) { try send(packet) }
        for packet in quiet[20..<30] { try send(packet) }
        #expect(waitUntil { session.statistics.packetsReceived == 28 })
        #expect(session.statistics.remoteSSRC == 0x1111)
        #expect(session.statistics.sourceTakeovers == 0)
        #expect(rendered(60) < 0.001, "the spoofer's tone was played after the outage")
    }

    /// Malformed datagrams from the remote are counted by reason and dropped; the session keeps working.
    @Test func dropsMalformedDatagramsByReason() throws {
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let remote = try UDPSocket(binding: "127.0.0.1:0")
        let session = try CallSession(socket: local, configuration: CallConfiguration(remote: remote.localAddress))
        try session.start()
        defer { session.stop() }
        var valid = try RTPStreamFixture(ssrc: 0x3333)
        let goodStream = try valid.packets(TestSignals.voice(sampleRate: 16000, frameCount: 960))
        let good = goodStream[0]

        var cases: [(bytes: [UInt8], reason: CallDropReason)] = [
            ([0x80], .runt),
            (Array(good[..<8]), .malformedRTP(.truncatedHeader)),
            ([0x40] + good.dropFirst(), .malformedRTP(.unsupportedVersion)),
            ([0x8f] + good[1..<12] + [1, 2, 3, 4], .malformedRTP(.truncatedCSRCList)),
            ([0x90] + good[1..<12] + [0xbe, 0xde, 0xff, 0xff] + good[12...], .malformedRTP(.truncatedExtension)),
            ([0xa0] + good[1...].dropLast() + [0xff], .malformedRTP(.invalidPadding)),
            ([good[0], 0x60] + good[2...], .malformedRTP(.unexpectedPayloadType)),
            (Array(good[..<12]), .malformedRTP(.emptyPayload)),
            ([0x80, 0xc8, 0x00, 0x40, 1, 2, 3, 4], .malformedRTCP(.lengthExceedsDatagram)),
            ([0x80, 0xca, 0x00, 0x01, 1, 2, 3, 4], .malformedRTCP(.noReport)),
            ([UInt8](repeating: 0x80, count: 3000), .oversized),
        ]
        var generator = SplitMix64(seed: 99)
        for _ in 0..<40 {
            let count = Int.random(in: 12...200, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes[0] &= 0x7f  // version 0 or 1: never valid RTP/RTCP
            cases.append((bytes, .malformedRTP(.unsupportedVersion)))
        }
        for (bytes, _) in cases { try remote.send(bytes, to: local.localAddress) }
        #expect(waitUntil { session.statistics.droppedTotal == cases.count })
        let statistics = session.statistics
        var expected: [CallDropReason: Int] = [:]
        for (_, reason) in cases { expected[reason, default: 0] += 1 }
        // Random bytes with the RTCP marker byte are RTCP with a bad version: same reason family.
        let randomAsRTCP = statistics.dropped(.malformedRTCP(.unsupportedVersion))
        expected[.malformedRTP(.unsupportedVersion), default: 0] -= randomAsRTCP
        if randomAsRTCP > 0 { expected[.malformedRTCP(.unsupportedVersion)] = randomAsRTCP }
        #expect(statistics.dropped == expected)
        #expect(statistics.packetsReceived == 0 && statistics.remoteSSRC == nil)

        var out = [Float](repeating: 1, count: 160)
        out.withUnsafeMutableBufferPointer { session.renderReceived(into: $0) }
        #expect(out.allSatisfy { $0 == 0 })
        for packet in goodStream { try remote.send(packet, to: local.localAddress) }
        #expect(waitUntil { session.statistics.packetsReceived == goodStream.count - 2 })
    }

    /// RTCP reports flow both ways: each side learns the round-trip time and the other's view of its stream.
    @Test func reportsRoundTripAndLoss() throws {
        let pair = try CallPair { $0.rtcpIntervalSeconds = 0.15 }
        try pair.start()
        defer { pair.stop() }
        _ = pair.talk(TestSignals.voice(sampleRate: 16000, frameCount: 12800), voiceRate: 16000)
        for statistics in [pair.a.statistics, pair.b.statistics] {
            #expect(statistics.rtcpSent >= 3 && statistics.rtcpReceived >= 3, "\(statistics.rtcpSent) / \(statistics.rtcpReceived)")
            let rtt = try #require(statistics.roundTripMilliseconds)
            #expect(rtt >= 0 && rtt < 100, "RTT \(rtt) ms")
            #expect(statistics.remoteLossPercent == 0)
        }
    }

    /// The audio-side calls allocate nothing while packets flow both ways (and with rate conversion).
    @Test(arguments: [16000, 11025])
    func audioSideDoesNotAllocate(voiceRate: Int) throws {
        let pair = try CallPair(voiceRate: voiceRate)
        try pair.start()
        defer { pair.stop() }
        let blockFrames = voiceRate / 100
        let voice = TestSignals.voice(sampleRate: voiceRate, frameCount: blockFrames)
        var out = [Float](repeating: 0, count: blockFrames)
        let allocations = voice.withUnsafeBufferPointer { voice in
            out.withUnsafeMutableBufferPointer { out in
                var allocations: UInt64 = 0
                runInRealTime(periods: 60) { period in
                    if period == 30 { alloc_counter_start() }
                    pair.a.sendCaptured(voice)
                    pair.b.sendCaptured(voice)
                    pair.a.renderReceived(into: out)
                    pair.b.renderReceived(into: out)
                    if period == 59 { allocations = alloc_counter_stop() }
                }
                return allocations
            }
        }
        #expect(allocations == 0)
        #expect(pair.b.statistics.jitterBuffer.received > 0)
    }

    /// Stopping is prompt and repeatable; a stopped session can be dropped at once.
    @Test func stopsCleanly() throws {
        let pair = try CallPair()
        pair.stop()
        try pair.start()
        try pair.start()
        pair.stop()
        pair.stop()
        try pair.a.start()
        pair.a.stop()
    }
}
