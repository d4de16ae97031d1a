import Foundation
import Testing
@testable import VoiceCall

@Suite struct UDPSocketTests {
    static func loopback() throws -> UDPSocket { try UDPSocket(binding: "127.0.0.1:0") }

    /// Two sockets exchange RTP over 127.0.0.1; a third socket's datagrams are told apart by source address;
    /// a garbage datagram arrives and is refused by the parser.
    @Test func exchangesRTPAndTellsSourcesApart() throws {
        let alice = try Self.loopback()
        let bob = try Self.loopback()
        let stranger = try Self.loopback()
        #expect(alice.localAddress.port != 0 && alice.localAddress != bob.localAddress)
        #expect(alice.localAddress.description.hasPrefix("127.0.0.1:"))

        var sender = RTPSender(ssrc: 0xa11ce)
        var datagram = [UInt8](repeating: 0, count: 1500)
        let payload: [UInt8] = [0x78, 9, 8, 7]
        for _ in 0..<5 {
            let count = payload.withUnsafeBytes { bytes in datagram.withUnsafeMutableBytes { sender.packetize(bytes, rtpTicks: 960, into: $0) } }
            try datagram.withUnsafeBytes { try alice.send(UnsafeRawBufferPointer(rebasing: $0[..<count!]), to: bob.localAddress) }
        }
        try [UInt8](repeating: 0xff, count: 7).withUnsafeBytes { try stranger.send($0, to: bob.localAddress) }
        let count = payload.withUnsafeBytes { bytes in datagram.withUnsafeMutableBytes { sender.packetize(bytes, rtpTicks: 960, into: $0) } }
        try datagram.withUnsafeBytes { try alice.send(UnsafeRawBufferPointer(rebasing: $0[..<count!]), to: bob.localAddress) }

        var received = [UInt8](repeating: 0, count: 1500)
        var fromAlice: [UInt16] = []
        var fromOthers: [SocketAddress] = []
        var refused: [RTPParseError] = []
        while let incoming = try received.withUnsafeMutableBytes({ try bob.receive(into: $0, timeoutMilliseconds: 1000) }) {
            #expect(!incoming.wasTruncated)
            guard incoming.source == alice.localAddress else {
                fromOthers.append(incoming.source)
                continue
            }
            received.withUnsafeBytes { bytes in
                do throws(RTPParseError) {
                    let packet = try RTPPacket.parse(UnsafeRawBufferPointer(rebasing: bytes[..<incoming.byteCount]), expectedPayloadType: 111)
                    #expect(packet.header.ssrc == 0xa11ce && Array(packet.payload) == payload)
                    fromAlice.append(packet.header.sequenceNumber)
                } catch { refused.append(error) }
            }
            if fromAlice.count == 6 { break }
        }
        #expect(fromAlice.count == 6 && zip(fromAlice, fromAlice.dropFirst()).allSatisfy { $1 == $0 &+ 1 })
        #expect(fromOthers == [stranger.localAddress])
        #expect(refused.isEmpty)
        #expect(try received.withUnsafeMutableBytes { try bob.receive(into: $0, timeoutMilliseconds: 0) } == nil)

        try [UInt8](repeating: 0xff, count: 7).withUnsafeBytes { try alice.send($0, to: bob.localAddress) }
        let garbage = try #require(try received.withUnsafeMutableBytes { try bob.receive(into: $0, timeoutMilliseconds: 1000) })
        #expect(received.withUnsafeBytes { bytes in
            (try? RTPPacket.parse(UnsafeRawBufferPointer(rebasing: bytes[..<garbage.byteCount]))) == nil
        })
    }

    @Test func reportsTruncation() throws {
        let alice = try Self.loopback()
        let bob = try Self.loopback()
        try [UInt8](repeating: 1, count: 100).withUnsafeBytes { try alice.send($0, to: bob.localAddress) }
        var small = [UInt8](repeating: 0, count: 10)
        let datagram = try #require(try small.withUnsafeMutableBytes { try bob.receive(into: $0, timeoutMilliseconds: 1000) })
        #expect(datagram.byteCount == 10 && datagram.wasTruncated)
    }

    /// A burst of 1500 RTP-sized datagrams sent while nobody reads (a flood meeting a network thread that is not
    /// scheduled) waits whole in a call's receive buffer; the control, a socket with the system's default buffer,
    /// loses part of the same burst (on loopback a 172-byte datagram takes about 830 bytes of buffer: the usual
    /// default of 208 KiB holds 256, the 4 MiB granted about 5000). Where `net.core.rmem_max` is under the 2 MiB asked
    /// for, or the system's default buffer is within a quarter of the call's, the burst is not sent.
    @Test func aCallsSocketHoldsABurst() throws {
        let sender = try Self.loopback()
        let call = try Self.loopback()
        let control = try UDPSocket(binding: "127.0.0.1:0", receiveBufferBytes: nil)
        let rmemMax = try #require(Int(String(contentsOfFile: "/proc/sys/net/core/rmem_max", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(call.receiveBufferBytes == 2 * min(UDPSocket.callReceiveBufferBytes, rmemMax))
        guard rmemMax >= UDPSocket.callReceiveBufferBytes,
              4 * control.receiveBufferBytes <= call.receiveBufferBytes else { return }

        let burst = 1500
        let datagram = [UInt8](repeating: 0x80, count: 172)
        for _ in 0..<burst {
            try datagram.withUnsafeBytes {
                try sender.send($0, to: call.localAddress)
                try sender.send($0, to: control.localAddress)
            }
        }
        func drained(_ socket: UDPSocket) throws -> Int {
            var buffer = [UInt8](repeating: 0, count: 1500)
            var count = 0
            while try buffer.withUnsafeMutableBytes({ try socket.receive(into: $0, timeoutMilliseconds: 0) }) != nil { count += 1 }
            return count
        }
        #expect(try drained(call) == burst)
        let held = try drained(control)
        #expect(held < burst)
        // The kernel's count of the drops comes with the next datagram it queues.
        #expect(control.kernelDropCount == 0 && call.kernelDropCount == 0)
        try datagram.withUnsafeBytes { try sender.send($0, to: control.localAddress) }
        #expect(try drained(control) == 1)
        #expect(control.kernelDropCount == burst - held)
    }

    @Test func portInUseIsAClearError() throws {
        let first = try Self.loopback()
        do {
            _ = try UDPSocket(bindingTo: first.localAddress)
            Issue.record("bound a port already in use")
        } catch {
            guard case .addressInUse(let address) = error else { Issue.record("\(error)"); return }
            #expect(address == first.localAddress)
            #expect(error.description.contains("already in use"))
        }
    }

    @Test func badAddressesAreClearErrors() throws {
        for text in ["localhost", "127.0.0.1:", "127.0.0.1:70000", ":5000"] {
            #expect(throws: SocketError.self) { try SocketAddress.resolve(text) }
        }
        do {
            _ = try SocketAddress.resolve("no-such-host.invalid:5004")
            Issue.record("resolved an invalid host")
        } catch {
            guard case .unresolvable(let host, _) = error else { Issue.record("\(error)"); return }
            #expect(host == "no-such-host.invalid")
            #expect(error.description.hasPrefix("cannot resolve 'no-such-host.invalid': "))
        }
        #expect(try SocketAddress.resolve("localhost:5004").port == 5004)
        #expect(try SocketAddress.resolve("[::1]:6000").description == "[::1]:6000")
        #expect(SocketError.system(call: "sendto", errno: 111).description.contains("Connection refused"))
    }
}
