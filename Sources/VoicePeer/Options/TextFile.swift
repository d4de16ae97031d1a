import Glibc

/// Small text outputs (statistics JSON, SDP), written with the system's own reason on failure in one line.
enum TextFile {
    /// Creates or truncates `path` and writes `text` to it. Not real-time safe.
    static func write(_ text: String, to path: String) throws(CommandFailure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw failure(path) }
            offset += written
        }
    }

    private static func failure(_ path: String) -> CommandFailure {
        CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))")
    }
}
