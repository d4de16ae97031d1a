#if canImport(Glibc)
import Glibc
#endif

/// The process's standard error, written at once with write(2) (unbuffered): the status line, messages and the
/// log. Not real-time safe.
enum StandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
