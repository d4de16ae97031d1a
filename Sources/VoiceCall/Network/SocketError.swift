#if canImport(Glibc)
import Glibc
#endif

/// Why a socket operation failed. System failures carry `strerror`'s words and the call that failed;
/// building one does not allocate, so the network loop may throw it freely.
public enum SocketError: Error, CustomStringConvertible {
    /// Not of the form HOST:PORT with a port in 0–65535.
    case invalidAddress(String)
    /// getaddrinfo could not resolve the host; `code` is its EAI_ code.
    case unresolvable(host: String, code: Int32)
    /// Another socket is bound to this address and port already.
    case addressInUse(SocketAddress)
    /// A system call failed with `errno`.
    case system(call: StaticString, errno: Int32)

    public var description: String {
        switch self {
        case .invalidAddress(let text): "'\(text)' is not HOST:PORT with a port in 0–65535"
        case .unresolvable(let host, let code): "cannot resolve '\(host)': \(String(cString: gai_strerror(code)))"
        case .addressInUse(let address): "\(address) is already in use by another socket"
        case .system(let call, let code): "\(call): \(String(cString: strerror(code))) (errno \(code))"
        }
    }
}
