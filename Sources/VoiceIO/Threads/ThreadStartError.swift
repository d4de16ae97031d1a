import Glibc

/// `pthread_create` refused to start a thread; `description` carries the C library's words for `code`.
public struct ThreadStartError: Error, CustomStringConvertible, Hashable {
    /// The error number `pthread_create` returned (EAGAIN, EPERM, ...).
    public let code: Int32

    public init(code: Int32) {
        self.code = code
    }

    public var description: String { String(cString: strerror(code)) }
}
