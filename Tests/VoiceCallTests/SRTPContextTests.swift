import CAllocCounter
import Testing
@testable import VoiceCall

@Suite struct SRTPContextTests {
    static let suites = SRTPSuite.available

    /// Debian's libsrtp2 is built with NSS, which offers GCM: both suites run.
    @Test func bothSuitesAreAvailable() {
        #expect(SRTPSuite.available == [.aesCM128HMACSHA1_80, .aeadAES128GCM])
    }

    /// RTP and RTCP round trip; the ciphertext differs from the plain text and grows by the tag.
    @Test(arguments: suites)
    func roundTrips(suite: SRTPSuite) throws {
        let key = SRTPMasterKey.random(suite: suite)
        let outbound = try SRTPContext(direction: .outbound, key: key)
        let inbound = try SRTPContext(direction: .inbound, key: key)
        var fixture = try RTPStreamFixture(ssrc: 0xabcd)
        let packets = try fixture.packets(TestSignals.voice(sampleRate: 16000, frameCount: 3200))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        for packet in packets {
            buffer.copyBytes(from: packet)
            let protected = try outbound.protectRTP(buffer, byteCount: packet.count)
            #expect(protected > packet.count && Array(buffer[12..<packet.count]) != Array(packet[12...]))
            let plain = try inbound.unprotectRTP(buffer, byteCount: protected)
            #expect(Array(buffer[..<plain]) == packet)
        }
        let report = RTCPReport(ssrc: 0xabcd, senderInfo: nil, blocks: [])
        let reportBytes = try #require(report.write(cname: "x", into: buffer))
        let plainReport = Array(buffer[..<reportBytes])
        let protected = try outbound.protectRTCP(buffer, byteCount: reportBytes)
        #expect(try inbound.unprotectRTCP(buffer, byteCount: protected) == reportBytes)
        #expect(Array(buffer[..<reportBytes]) == plainReport)
    }

    /// A flipped bit, a wrong key, a replay and a packet behind the window are each refused with libsrtp's status.
    @Test(arguments: suites)
    func refusesForgeriesAndReplays(suite: SRTPSuite) throws {
        let key = SRTPMasterKey.random(suite: suite)
        let outbound = try SRTPContext(direction: .outbound, key: key)
        let inbound = try SRTPContext(direction: .inbound, key: key)
        let stranger = try SRTPContext(direction: .inbound, key: .random(suite: suite))
        var fixture = try RTPStreamFixture(ssrc: 7)
        let packets = try fixture.packets([Float](repeating: 0, count: 320 * 1100))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        var protected: [[UInt8]] = []
        for packet in packets {
            buffer.copyBytes(from: packet)
            protected.append(Array(buffer[..<(try outbound.protectRTP(buffer, byteCount: packet.count))]))
        }
        func unprotect(_ bytes: [UInt8], with context: SRTPContext) -> SRTPError? {
            buffer.copyBytes(from: bytes)
            do { _ = try context.unprotectRTP(buffer, byteCount: bytes.count); return nil } catch { return error }
        }
        var tampered = protected[0]
        tampered[20] ^= 1
        #expect(unprotect(tampered, with: inbound) == .authenticationFailed)
        #expect(unprotect(protected[0], with: stranger) == .authenticationFailed)
        #expect(unprotect(Array(protected[0].prefix(14)), with: inbound) != nil)
        #expect(unprotect(protected[0], with: inbound) == nil)
        #expect(unprotect(protected[0], with: inbound) == .replayed)
        #expect(unprotect(protected[packets.count - 1], with: inbound) == nil)
        #expect(unprotect(protected[1], with: inbound) == .tooOld)
        #expect(SRTPError.authenticationFailed.description == "authentication failed (srtp_err_status_auth_fail)")
    }

    /// Protecting and unprotecting allocate only what libsrtp2's crypto backend allocates, the same for every
    /// packet once the stream is known (no growth). Debian's libsrtp2 is built on NSS, which creates a cipher
    /// context per packet (measured: 28 allocations per protect+unprotect with AES-CM, 10 with GCM), so SRTP is
    /// not allocation-free there: it runs on the network thread, never the audio thread. That the counter sees
    /// NSS's allocations inside libsrtp2 is the positive control.
    @Test(arguments: suites)
    func allocationsPerPacketAreConstant(suite: SRTPSuite) throws {
        let key = SRTPMasterKey.random(suite: suite)
        let outbound = try SRTPContext(direction: .outbound, key: key)
        let inbound = try SRTPContext(direction: .inbound, key: key)
        var fixture = try RTPStreamFixture(ssrc: 99)
        let packets = try fixture.packets(TestSignals.voice(sampleRate: 16000, frameCount: 16000))
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        var failures = 0
        func exchange(_ packet: [UInt8]) -> UInt64 {
            buffer.copyBytes(from: packet)
            alloc_counter_start()
            do {
                let protected = try outbound.protectRTP(buffer, byteCount: packet.count)
                _ = try inbound.unprotectRTP(buffer, byteCount: protected)
            } catch { failures += 1 }
            return alloc_counter_stop()
        }
        let first = exchange(packets[0])
        let perPacket = packets.dropFirst().map(exchange)
        print("SRTP \(suite.rawValue): allocations first packet \(first), then per packet \(perPacket.min()!)–\(perPacket.max()!)")
        #expect(first > 0 && perPacket.max()! > 0, "the counter must see the C library's allocations")
        #expect(perPacket.min() == perPacket.max(), "allocations vary per packet: \(perPacket)")
        #expect(perPacket.max()! <= 40)
        #expect(failures == 0)
    }
}
