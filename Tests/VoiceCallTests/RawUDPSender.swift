import Glibc
@testable import VoiceCall

/// Sends UDP datagrams with any IPv4 source address and port, writing the IP header itself (a raw socket with
/// IP_HDRINCL, implied by IPPROTO_RAW): the forger of the attack tests. Needs root (CAP_NET_RAW).
final class RawUDPSender {
    private let descriptor: Int32

    static var isPermitted: Bool { getuid() == 0 }

    init() throws {
        descriptor = socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_RAW))
        guard descriptor >= 0 else { throw SocketError.system(call: "socket(SOCK_RAW)", errno: errno) }
        var on: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_IP), IP_HDRINCL, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    deinit { close(descriptor) }

    /// Sends `payload` as a UDP datagram that claims to come from `source`.
    func send(_ payload: [UInt8], from source: SocketAddress, to destination: SocketAddress) throws {
        guard case .v4(let sourceHost) = source.host, case .v4(let destinationHost) = destination.host else {
            throw SocketError.invalidAddress("IPv4 only")
        }
        let udpLength = 8 + payload.count
        let totalLength = 20 + udpLength
        var packet = [UInt8](repeating: 0, count: totalLength)
        func put16(_ value: Int, at offset: Int) {
            packet[offset] = UInt8(value >> 8 & 0xff)
            packet[offset + 1] = UInt8(value & 0xff)
        }
        func put32(networkOrder value: UInt32, at offset: Int) {
            withUnsafeBytes(of: value) { for index in 0..<4 { packet[offset + index] = $0[index] } }
        }
        packet[0] = 0x45                  // IPv4, 5 words of header
        put16(totalLength, at: 2)
        put16(0x4000, at: 6)              // don't fragment
        packet[8] = 64                    // TTL
        packet[9] = UInt8(IPPROTO_UDP)
        put32(networkOrder: sourceHost, at: 12)
        put32(networkOrder: destinationHost, at: 16)
        put16(Int(source.port), at: 20)
        put16(Int(destination.port), at: 22)
        put16(udpLength, at: 24)          // checksum 0: none (IPv4 allows it)
        packet.replaceSubrange(28..., with: payload)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = destinationHost
        let sent = packet.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(descriptor, bytes.baseAddress, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard sent == totalLength else { throw SocketError.system(call: "sendto(raw)", errno: errno) }
    }
}
