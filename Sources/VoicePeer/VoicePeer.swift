import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

@main
struct VoicePeer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voicepeer",
        abstract: "Full-duplex voice engine: echo cancellation, gain control and talk-back calls over RTP/Opus.",
        subcommands: [ProcessCommand.self, SimulateCommand.self, CallCommand.self, SDPCommand.self, CompareCommand.self,
                      DevicesCommand.self]
    )

    /// Parses and runs the subcommand. A usage error (unknown flag, missing or invalid value, failed validation)
    /// is one line on standard error and exit code 64, like the run-time errors `CommandFailure` reports; help
    /// and `ExitCode`s keep ArgumentParser's handling.
    static func main() {
        do {
            var command = try parseAsRoot()
            (command as? any LoggingCommand)?.logging.bootstrap()
            try command.run()
        } catch {
            let code = exitCode(for: error)
            if code == .success || error is ExitCode { exit(withError: error) }
            var text = message(for: error).split(whereSeparator: \.isNewline).joined(separator: " ")
            if text.hasPrefix("Missing value for") { text += " (write a value starting with - as --flag=VALUE)" }
            StandardError.write("voicepeer: error: \(text)\n")
            Glibc.exit(code.rawValue)
        }
    }
}
