import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif

/// A command's failure, reported as one line on standard error with a non-zero exit, never a stack trace.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// Runs `body`; any error becomes `voicepeer: error: <description>` on standard error and exit code 1.
    static func reporting(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            let line = "voicepeer: error: \(error)\n"
            StandardError.write(line)
            throw ExitCode.failure
        }
    }
}
