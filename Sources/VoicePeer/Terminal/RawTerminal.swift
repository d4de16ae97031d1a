#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Puts a terminal on standard input into raw-ish mode (no line buffering, no echo; Ctrl-C still raises
/// SIGINT) so single key presses can be read, and restores the saved settings on `restore`, on exit, and
/// when the process ends through SIGINT, SIGTERM or SIGHUP handled by `SignalWatcher`.
final class RawTerminal {
    private static let saved = SavedSettings()
    private let descriptor = STDIN_FILENO

    /// Nil when standard input is not a terminal.
    init?() {
        guard isatty(descriptor) == 1 else { return nil }
        var settings = termios()
        guard tcgetattr(descriptor, &settings) == 0 else { return nil }
        Self.saved.store(settings)
        atexit { RawTerminal.saved.restore() }
        var raw = settings
        raw.c_lflag &= ~tcflag_t(ICANON | ECHO)
        withUnsafeMutableBytes(of: &raw.c_cc) { bytes in
            bytes[Int(VMIN)] = 0
            bytes[Int(VTIME)] = 0
        }
        tcsetattr(descriptor, TCSANOW, &raw)
    }

    deinit { restore() }

    func restore() { Self.saved.restore() }

    /// Waits up to `timeoutMilliseconds` for a key; returns it, or nil.
    func readKey(timeoutMilliseconds: Int32) -> UInt8? {
        var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&request, 1, timeoutMilliseconds) > 0 else { return nil }
        var byte: UInt8 = 0
        return read(descriptor, &byte, 1) == 1 ? byte : nil
    }

    /// The settings to go back to, kept where an atexit handler can reach them.
    private final class SavedSettings: @unchecked Sendable {
        private let settings = Mutex<termios?>(nil)

        func store(_ value: termios) { settings.withLock { $0 = value } }

        func restore() {
            settings.withLock { settings in
                guard var saved = settings else { return }
                tcsetattr(STDIN_FILENO, TCSANOW, &saved)
                settings = nil
            }
        }
    }
}
