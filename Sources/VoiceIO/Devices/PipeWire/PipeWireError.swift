import Glibc

/// A failed libpipewire call or a server that refused, vanished or reported an error: what was being done, on
/// which server, and PipeWire's own words (its error message, or `strerror` of the negative errno it returned).
///
/// `description` is one line that names the server and, when the server is missing, busy or gone, what to try.
public struct PipeWireError: Error, Equatable, CustomStringConvertible {
    /// What was being done, e.g. "connect" or "start the playback stream".
    public let operation: String
    /// The server as named by the caller (a socket path or name), or `default` for libpipewire's default.
    public let server: String
    /// The negative errno libpipewire returned or reported (0 when it gave only a message).
    public let code: Int32
    /// PipeWire's message (from its error event or stream state), or nil to use `strerror(code)`.
    public let message: String?

    public init(_ operation: String, server: String, code: Int32, message: String? = nil) {
        self.operation = operation
        self.server = server
        self.code = code
        self.message = message
    }

    /// PipeWire's reason.
    public var reason: String {
        if let message, !message.isEmpty { return message }
        return code == 0 ? "unknown error" : String(cString: strerror(-code))
    }

    /// The server is not there or went away (no socket, connection refused or broken).
    public var isServerGone: Bool {
        [-ENOENT, -ECONNREFUSED, -EHOSTDOWN, -EPIPE, -ECONNRESET, -ENOTCONN].contains(code)
    }

    /// The server or node is busy (`-EBUSY`).
    public var isBusy: Bool { code == -EBUSY }

    /// What a user can do about it, when there is something to say.
    public var suggestion: String? {
        if isServerGone {
            return "is PipeWire running? start it, point PIPEWIRE_REMOTE at its socket, or use --device alsa:default"
        }
        if isBusy { return "another client holds the device; close it or pick another target (voicepeer devices)" }
        return nil
    }

    public var description: String {
        let line = "pipewire:\(server): cannot \(operation): \(reason)"
        return suggestion.map { "\(line) (\($0))" } ?? line
    }
}
