import Foundation
import Logging

/// What a test's loggers logged, with the thread each message was logged on: a helper for the tests, in no
/// product. `logger(label:)` makes a logger that records here whatever the process's logging system is.
public final class CapturedLog: @unchecked Sendable {
    public struct Entry: @unchecked Sendable {
        public var level: Logger.Level
        public var message: String
        public var metadata: Logger.Metadata
        public var thread: pthread_t
    }

    private let lock = NSLock()
    private var stored: [Entry] = []

    public init() {}

    public var entries: [Entry] { lock.withLock { stored } }

    public func logger(label: String) -> Logger {
        Logger(label: label) { _ in Handler(log: self) }
    }

    fileprivate func append(_ event: LogEvent) {
        let entry = Entry(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:],
                          thread: pthread_self())
        lock.withLock { stored.append(entry) }
    }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { log.append(event) }
    }
}
