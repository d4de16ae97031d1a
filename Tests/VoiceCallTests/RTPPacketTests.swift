import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

@Suite struct RTPPacketTests {
    /// Serialises `header` and `payload`, parses the bytes back.
    static func bytes(of header: RTPHeader, payload: [UInt8]) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 1500)
        let count = payload.withUnsafeBytes { payloadBytes in
            buffer.withUnsafeMutableBytes { RTPPacket(header: header, payload: payloadBytes).write(into: $0) }
        }
        return Array(buffer[..<count!])
    }

    static func parse(_ datagram: [UInt8], expectedPayloadType: UInt8? = nil) -> Result<(RTPHeader, [UInt8]), RTPParseError> {
        datagram.withUnsafeBytes { bytes in
            do throws(RTPParseError) {
                let packet = try RTPPacket.parse(bytes, expectedPayloadType: expectedPayloadType)
                return .success((packet.header, Array(packet.payload)))
            } catch {
                return .failure(error)
            }
        }
    }

    @Test func roundTrip() throws {
        let header = RTPHeader(marker: true, payloadType: 111, sequenceNumber: 65535, timestamp: 0xdead_beef, ssrc: 0x1234_5678)
        let payload: [UInt8] = [0x78, 1, 2, 3, 4, 5]
        let datagram = Self.bytes(of: header, payload: payload)
        #expect(datagram.count == 18)
        #expect(datagram[0] == 0x80 && datagram[1] == 0x80 | 111)
        let (parsed, parsedPayload) = try Self.parse(datagram, expectedPayloadType: 111).get()
        #expect(parsed == header)
        #expect(parsedPayload == payload)
    }

    /// CSRCs, a header extension and padding from another sender are skipped to reach the payload.
    @Test func skipsCSRCsExtensionAndPadding() throws {
        var datagram: [UInt8] = [0x80 | 0x20 | 0x10 | 2, 111, 0, 7, 0, 0, 3, 0xc0, 1, 2, 3, 4]
        datagram += [9, 9, 9, 9, 8, 8, 8, 8]                  // two CSRCs
        datagram += [0xbe, 0xde, 0, 1, 0x10, 0xaa, 0, 0]      // one-word extension
        datagram += [0x78, 0x42]                              // payload
        datagram += [0, 0, 3]                                 // three bytes of padding
        let (header, payload) = try Self.parse(datagram).get()
        #expect(header.sequenceNumber == 7 && header.timestamp == 960 && header.ssrc == 0x0102_0304 && !header.marker)
        #expect(payload == [0x78, 0x42])
    }

    @Test func rejectsMalformedWithReason() {
        let valid = Self.bytes(of: RTPHeader(sequenceNumber: 1, timestamp: 2, ssrc: 3), payload: [0x78, 0, 0, 0])
        func expect(_ datagram: [UInt8], _ reason: RTPParseError, expectedPayloadType: UInt8? = nil) {
            #expect(throws: reason) { try Self.parse(datagram, expectedPayloadType: expectedPayloadType).get() }
        }
        expect(Array(valid[..<11]), .truncatedHeader)
        expect([], .truncatedHeader)
        expect([0x40] + valid.dropFirst(), .unsupportedVersion)
        expect([0x8f] + valid.dropFirst(), .truncatedCSRCList)
        expect([0x90] + valid[1..<14], .truncatedExtension)
        expect([0x90] + valid[1..<12] + [0xbe, 0xde, 0xff, 0xff] + valid[12...], .truncatedExtension)
        expect([0xa0] + valid.dropFirst().dropLast() + [200], .invalidPadding)
        expect([0xa0] + valid.dropFirst().dropLast() + [0], .invalidPadding)
        expect([0xa0] + valid.dropFirst().dropLast() + [4], .emptyPayload)
        expect(Array(valid[..<12]), .emptyPayload)
        expect([0x80, 0x80 | 72] + valid.dropFirst(2), .payloadTypeConflictsWithRTCP)
        expect(valid, .unexpectedPayloadType, expectedPayloadType: 96)
    }

    /// Thousands of random and mutated datagrams: each either parses to a payload inside the datagram or is
    /// refused with a reason; none crashes.
    @Test func survivesFuzzing() {
        var random = SplitMix64(seed: 0x5eed)
        let valid = Self.bytes(of: RTPHeader(sequenceNumber: 1, timestamp: 2, ssrc: 3), payload: [UInt8](repeating: 0x55, count: 40))
        var accepted = 0
        var refusals: [RTPParseError: Int] = [:]
        for round in 0..<20000 {
            var datagram: [UInt8]
            if round % 2 == 0 {
                datagram = (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            } else {
                datagram = Array(valid.prefix(Int.random(in: 0...valid.count, using: &random)))
                for _ in 0..<Int.random(in: 1...4, using: &random) where !datagram.isEmpty {
                    datagram[Int.random(in: 0..<datagram.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            }
            datagram.withUnsafeBytes { bytes in
                do throws(RTPParseError) {
                    let packet = try RTPPacket.parse(bytes)
                    let start = packet.payload.baseAddress! - bytes.baseAddress!
                    #expect(start >= 12 && start + packet.payload.count <= bytes.count && !packet.payload.isEmpty)
                    accepted += 1
                } catch {
                    refusals[error, default: 0] += 1
                }
            }
        }
        #expect(accepted > 1000)
        #expect(refusals.count == RTPParseError.allCases.count - 1, "\(refusals)")
    }

    /// Timestamps advance by the 48 kHz duration whatever the codec rate; the marker opens each talkspurt;
    /// the sequence number wraps.
    @Test func senderNumbersPackets() throws {
        var sender = RTPSender(ssrc: 42, initialSequenceNumber: 65534, initialTimestamp: UInt32.max - 959)
        let format = try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 20)
        #expect(format.rtpTicksPerPacket == 960 && format.frameCount == 320)
        var buffer = [UInt8](repeating: 0, count: 100)
        let payload: [UInt8] = [0x78, 1, 2]
        var headers: [RTPHeader] = []
        for index in 0..<5 {
            if index == 3 { sender.skip(rtpTicks: format.rtpTicksPerPacket) }
            let count = payload.withUnsafeBytes { bytes in
                buffer.withUnsafeMutableBytes { sender.packetize(bytes, rtpTicks: format.rtpTicksPerPacket, into: $0) }
            }
            headers.append(try Self.parse(Array(buffer[..<count!])).get().0)
        }
        #expect(headers.map(\.sequenceNumber) == [65534, 65535, 0, 1, 2])
        #expect(headers.map(\.timestamp) == [UInt32.max - 959, 0, 960, 2880, 3840])
        #expect(headers.map(\.marker) == [true, false, false, true, false])
        #expect(headers.allSatisfy { $0.ssrc == 42 && $0.payloadType == 111 })
        #expect(sender.packetCount == 5 && sender.octetCount == 15)
        let tooSmall = payload.withUnsafeBytes { bytes in
            buffer.withUnsafeMutableBytes { sender.packetize(bytes, rtpTicks: 960, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<13])) }
        }
        #expect(tooSmall == nil && sender.packetCount == 5)
        #expect(RTPSender().ssrc != RTPSender().ssrc)
    }

    @Test func classifiesRTPAndRTCP() {
        func kind(_ bytes: [UInt8]) -> DatagramKind { bytes.withUnsafeBytes { DatagramKind(classifying: $0) } }
        #expect(kind([0x80, 111]) == .rtp)
        #expect(kind([0x80, 0x80 | 111]) == .rtp)
        #expect(kind([0x80, 200]) == .rtcp)
        #expect(kind([0x81, 201]) == .rtcp)
        #expect(kind([0x80]) == .runt)
    }
}
