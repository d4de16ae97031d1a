#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address with a UDP port, comparable and hashable so a receiver can tell sources apart.
/// Converting to and from `sockaddr` is real-time safe; resolving names is not (getaddrinfo may block).
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    enum Host: Sendable, Hashable {
        /// In network byte order, as `in_addr.s_addr` holds it.
        case v4(UInt32)
        /// The 16 address bytes, and the interface scope for link-local addresses.
        case v6(UInt64, UInt64, scopeID: UInt32)
    }

    let host: Host
    /// 0 ... 65535; 0 when binding asks the system for a free port.
    public let port: UInt16

    init(host: Host, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Resolves `host` (a name or a numeric address) with getaddrinfo and takes its first UDP address.
    public static func resolve(host: String, port: UInt16) throws(SocketError) -> SocketAddress {
        try resolve(host: host, port: port, flags: 0)
    }

    /// A numeric IPv4 or IPv6 address, never looked up (for addresses read from untrusted text).
    public static func numeric(host: String, port: UInt16) throws(SocketError) -> SocketAddress {
        try resolve(host: host, port: port, flags: AI_NUMERICHOST)
    }

    private static func resolve(host: String, port: UInt16, flags: Int32) throws(SocketError) -> SocketAddress {
        var hints = addrinfo()
        hints.ai_flags = flags
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, nil, &hints, &list)
        guard code == 0, let list else { throw .unresolvable(host: host, code: code) }
        defer { freeaddrinfo(list) }
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr,
               let address = SocketAddress(socketAddress, length: current.pointee.ai_addrlen) {
                return SocketAddress(host: address.host, port: port)
            }
            entry = current.pointee.ai_next
        }
        throw .unresolvable(host: host, code: EAI_NONAME)
    }

    /// Parses and resolves "HOST:PORT" ("[v6]:PORT" for IPv6 literals).
    public static func resolve(_ hostAndPort: String) throws(SocketError) -> SocketAddress {
        guard let colon = hostAndPort.lastIndex(of: ":"),
              let port = UInt16(hostAndPort[hostAndPort.index(after: colon)...]) else {
            throw .invalidAddress(hostAndPort)
        }
        var host = hostAndPort[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { throw .invalidAddress(hostAndPort) }
        return try resolve(host: String(host), port: port)
    }

    /// Reads an AF_INET or AF_INET6 `sockaddr`; nil for other families or a short length.
    init?(_ address: UnsafePointer<sockaddr>, length: socklen_t) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET where Int(length) >= MemoryLayout<sockaddr_in>.size:
            let v4 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in.self)
            self.init(host: .v4(v4.sin_addr.s_addr), port: UInt16(bigEndian: v4.sin_port))
        case AF_INET6 where Int(length) >= MemoryLayout<sockaddr_in6>.size:
            let v6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
            let words = withUnsafeBytes(of: v6.sin6_addr) { ($0.loadUnaligned(as: UInt64.self), $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) }
            self.init(host: .v6(words.0, words.1, scopeID: v6.sin6_scope_id), port: UInt16(bigEndian: v6.sin6_port))
        default:
            return nil
        }
    }

    /// AF_INET or AF_INET6.
    var family: Int32 {
        switch host {
        case .v4: AF_INET
        case .v6: AF_INET6
        }
    }

    /// Calls `body` with this address as a `sockaddr` and its length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        var storage = sockaddr_storage()
        let length: Int
        switch host {
        case .v4(let address):
            var v4 = sockaddr_in()
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = port.bigEndian
            v4.sin_addr.s_addr = address
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v4, as: sockaddr_in.self) }
            length = MemoryLayout<sockaddr_in>.size
        case .v6(let high, let low, let scopeID):
            var v6 = sockaddr_in6()
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = port.bigEndian
            v6.sin6_scope_id = scopeID
            withUnsafeMutableBytes(of: &v6.sin6_addr) {
                $0.storeBytes(of: high, as: UInt64.self)
                $0.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            }
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: v6, as: sockaddr_in6.self) }
            length = MemoryLayout<sockaddr_in6>.size
        }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }

    /// "1.2.3.4:5" or "[::1]:5".
    public var description: String {
        family == AF_INET ? "\(hostDescription):\(port)" : "[\(hostDescription)]:\(port)"
    }

    /// The address alone: "1.2.3.4" or "::1".
    public var hostDescription: String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN)) { text -> String in
            text.initialize(repeating: 0)
            switch host {
            case .v4(let address):
                var raw = in_addr(s_addr: address)
                _ = inet_ntop(AF_INET, &raw, text.baseAddress, socklen_t(text.count))
            case .v6:
                withSockAddr { address, _ in
                    var v6 = UnsafeRawPointer(address).loadUnaligned(as: sockaddr_in6.self)
                    _ = inet_ntop(AF_INET6, &v6.sin6_addr, text.baseAddress, socklen_t(text.count))
                }
            }
            return String(cString: text.baseAddress!)
        }
    }
}
