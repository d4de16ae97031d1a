import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import Logging

/// `--log-level`: which of the library's diagnostics (device recovery, dropped packets, resets) reach standard
/// error. The library logs through swift-log and prints nothing itself; this is where the command line decides.
struct LogOptions: ParsableArguments {
    @Option(name: .customLong("log-level"),
            help: "Print the library's diagnostics at this level and above on standard error (trace, debug, info, notice, warning, error, critical).")
    var logLevel: Logger.Level = .warning

    /// Routes every logger of the process to standard error at the chosen level. Call once, before any logger
    /// is made.
    func bootstrap() {
        let level = logLevel
        LoggingSystem.bootstrap { label in StandardErrorLogHandler(label: label, logLevel: level) }
    }
}

/// A subcommand whose run logs through `LogOptions`.
protocol LoggingCommand {
    var logging: LogOptions { get }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// One line per message on standard error: `[level] label: message (key: value, ...)`. On a terminal the line
/// first clears the live status line, which the next status update redraws.
struct StandardErrorLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    private static let clearsLine = isatty(STDERR_FILENO) == 1

    init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details = merged.isEmpty ? ""
            : " (" + merged.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + ")"
        let line = "\(Self.clearsLine ? "\r\u{1B}[K" : "")[\(event.level)] \(label): \(event.message)\(details)\n"
        StandardError.write(line)
    }
}

extension CallCommand: LoggingCommand {}
extension SimulateCommand: LoggingCommand {}
