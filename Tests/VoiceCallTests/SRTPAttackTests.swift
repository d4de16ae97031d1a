import Foundation
import Testing
@testable import VoiceCall

/// A third party forges datagrams with the trusted peer's own address and port (raw socket, IP_HDRINCL, on
/// loopback) at a session that runs SRTP: nothing it sends is played, the real stream is untouched, and every
/// forgery is counted by libsrtp's reason.
@Suite(.enabled(if: RawUDPSender.isPermitted, "raw sockets need root"))
struct SRTPAttackTests {
    /// The session under attack, the real peer's socket and its SRTP sender, and the forger.
    struct Scene {
        let local = try! UDPSocket(binding: "127.0.0.1:0")
        let peer = try! UDPSocket(binding: "127.0.0.1:0")
        let session: CallSession
        let peerContext: SRTPContext
        let forger = try! RawUDPSender()
        var out = [Float](repeating: 0, count: 160)
        var heard: [Float] = []

        init(suite: SRTPSuite) throws {
            let peerKey = SRTPMasterKey.random(suite: suite)
            var configuration = CallConfiguration(remote: peer.localAddress)
            configuration.srtp = SRTPKeys(sending: .random(suite: suite), receiving: peerKey)
            session = try CallSession(socket: local, configuration: configuration)
            peerContext = try SRTPContext(direction: .outbound, key: peerKey)
        }

        func protect(_ packet: [UInt8]) throws -> [UInt8] {
            var buffer = packet + [UInt8](repeating: 0, count: SRTPContext.maximumTrailerByteCount)
            let count = try buffer.withUnsafeMutableBytes { try peerContext.protectRTP($0, byteCount: packet.count) }
            return Array(buffer[..<count])
        }

        func forge(_ datagram: [UInt8]) throws {
            try forger.send(datagram, from: peer.localAddress, to: local.localAddress)
        }

        mutating func render(_ periods: Int) {
            for _ in 0..<periods {
                out.withUnsafeMutableBufferPointer { session.renderReceived(into: $0) }
                heard += out
            }
        }
    }

    @Test(arguments: SRTPSuite.available)
    func forgeriesAndReplaysFromThePeersAddressAreNeverPlayed(suite: SRTPSuite) throws {
        var scene = try Scene(suite: suite)
        try scene.session.start()
        defer { scene.session.stop() }
        let tone = (0..<64000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 16000)) }

        // 1. Before the real peer starts: a well-formed plain RTP stream (1 kHz tone) with the peer's address.
        var forgedStream = try RTPStreamFixture(ssrc: 0xf0f0)
        let forgedPlain = try forgedStream.packets(Array(tone[..<16000]))
        for packet in forgedPlain {
            try scene.forge(packet)
            usleep(1000)
        }
        #expect(waitUntil { scene.session.statistics.droppedTotal == forgedPlain.count })
        #expect(scene.session.statistics.remoteSSRC == nil && scene.session.statistics.packetsReceived == 0)
        scene.render(50)

        // 2. The real peer's stream (silence) over SRTP. After each packet the forger replays it and one five
        //    packets older, and sends a plain tone packet that takes the stream's next sequence number before
        //    the real one does.
        var real = try RTPStreamFixture(ssrc: 0x1234)
        let realPlain = try real.packets([Float](repeating: 0, count: 16000 * 3))
        var imitation = try RTPStreamFixture(ssrc: 0x1234)
        let imitationPlain = try imitation.packets(Array(tone[..<(16000 * 3)]))
        var protected: [[UInt8]] = []
        var replays = 0, imitations = 0
        for (index, packet) in realPlain.enumerated() {
            protected.append(try scene.protect(packet))
            try scene.peer.send(protected[index], to: scene.local.localAddress)
            usleep(500)
            try scene.forge(protected[index])
            replays += 1
            if index >= 5 {
                try scene.forge(protected[index - 5])
                replays += 1
            }
            var forged = imitationPlain[index] + [UInt8](repeating: 0xaa, count: 10)   // room for a tag
            let next = (UInt16(packet[2]) << 8 | UInt16(packet[3])) &+ 1
            forged[2] = UInt8(next >> 8)
            forged[3] = UInt8(next & 0xff)
            try scene.forge(forged)
            imitations += 1
            if index % 2 == 1 { scene.render(2) }
            usleep(19_000)
        }
        let probation = 2   // the real stream's first packets, before SourceFilter latches it
        #expect(waitUntil { scene.session.statistics.packetsReceived == realPlain.count - probation })
        scene.render(30)
        let statistics = scene.session.statistics
        let forgedPlayedRMS = TestSignals.rms(scene.heard[...])
        print("attack (\(suite.rawValue)): forged plain RTP before the latch \(forgedPlain.count), replays \(replays), forged next packets \(imitations); real packets received \(statistics.packetsReceived)/\(realPlain.count) (probation \(statistics.dropped(.sourceOnProbation))), lost \(statistics.packetsLost), concealed \(statistics.jitterBuffer.concealed), duplicates \(statistics.jitterBuffer.duplicates), late \(statistics.jitterBuffer.late); dropped \(statistics.dropped); takeovers \(statistics.sourceTakeovers); rendered RMS \(forgedPlayedRMS)")
        #expect(statistics.packetsReceived == realPlain.count - probation && statistics.packetsLost == 0)
        #expect(statistics.dropped(.sourceOnProbation) == probation)
        #expect(statistics.remoteSSRC == 0x1234 && statistics.sourceTakeovers == 0)
        #expect(statistics.jitterBuffer.duplicates == 0 && statistics.jitterBuffer.late == 0)
        #expect(statistics.dropped(.srtp(.replayed)) == replays, "\(statistics.dropped)")
        #expect(statistics.dropped(.srtp(.authenticationFailed)) == forgedPlain.count + imitations, "\(statistics.dropped)")
        #expect(statistics.droppedTotal == forgedPlain.count + imitations + replays + probation)
        #expect(forgedPlayedRMS < 0.001, "forged audio was played")
    }

    /// Positive control: the same forger against a plain RTP session before the peer starts takes the stream
    /// and its tone is played (what SRTP prevents above).
    @Test func withoutSRTPTheForgedStreamIsPlayed() throws {
        let local = try UDPSocket(binding: "127.0.0.1:0")
        let peer = try UDPSocket(binding: "127.0.0.1:0")
        let session = try CallSession(socket: local, configuration: CallConfiguration(remote: peer.localAddress))
        try session.start()
        defer { session.stop() }
        let forger = try RawUDPSender()
        let tone = (0..<16000).map { Float(0.5 * sin(2 * Double.pi * 1000 * Double($0) / 16000)) }
        var forgedStream = try RTPStreamFixture(ssrc: 0xf0f0)
        var out = [Float](repeating: 0, count: 160)
        var heard: [Float] = []
        for packet in try forgedStream.packets(tone) {
            try forger.send(packet, from: peer.localAddress, to: local.localAddress)
            for _ in 0..<2 {
                out.withUnsafeMutableBufferPointer { session.renderReceived(into: $0) }
                heard += out
            }
            usleep(20_000)
        }
        #expect(session.statistics.remoteSSRC == 0xf0f0 && session.statistics.packetsReceived >= 40)
        #expect(TestSignals.rms(heard[...]) > 0.1)
    }
}
