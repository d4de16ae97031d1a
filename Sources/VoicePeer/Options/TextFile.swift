import Glibc

/// Small text outputs (statistics JSON, SDP), written with the system's own reason on failure in one line.
enum TextFile {
    /// Creates or truncates `path` and writes `text` to it. With `ownerOnly` (secrets: SRTP keys) the file is
    /// made 0600 before anything is written, also when it existed with a wider mode. Not real-time safe.
    static func write(_ text: String, to path: String, ownerOnly: Bool = false) throws(CommandFailure) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, ownerOnly ? 0o600 : 0o644)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        if ownerOnly && fchmod(descriptor, 0o600) != 0 { throw failure(path) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw failure(path) }
            offset += written
        }
    }

    /// The contents of a small text file (at most `maximumByteCount` bytes), as UTF-8.
    static func read(_ path: String, maximumByteCount: Int) throws(CommandFailure) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: maximumByteCount + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes[count...].withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got >= 0 else { throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))") }
            if got == 0 { break }
            count += got
        }
        guard count <= maximumByteCount else { throw CommandFailure("\(path): longer than \(maximumByteCount) bytes") }
        guard let text = String(validating: bytes[..<count], as: UTF8.self) else {
            throw CommandFailure("\(path): not UTF-8 text")
        }
        return text
    }

    private static func failure(_ path: String) -> CommandFailure {
        CommandFailure("cannot write \(path): \(String(cString: strerror(errno)))")
    }
}
