import Foundation
import Logging
import Testing
import VoiceIO
import VoiceIOSimulation

/// The unit's diagnostics go through swift-log, from a thread other than the device's.
@Suite("Unit diagnostics")
struct UnitDiagnosticsTests {
    final class Captured: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: [(level: Logger.Level, message: String, thread: pthread_t)] = []
        func append(_ level: Logger.Level, _ message: String) {
            lock.withLock { stored.append((level, message, pthread_self())) }
        }
        var entries: [(level: Logger.Level, message: String, thread: pthread_t)] { lock.withLock { stored } }
    }

    struct CapturingHandler: LogHandler {
        let captured: Captured
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { captured.append(event.level, "\(event.message)") }
    }

    @Test("voice the app never reads is dropped, counted on the device thread and logged off it")
    func droppedVoiceIsLoggedOffTheDeviceThread() throws {
        let captured = Captured()
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .virtual
        let room = try SimulatedRoom(configuration: configuration)
        var settings = VoiceProcessingSettings()
        settings.inputCapacityMilliseconds = 200
        let unit = try VoiceProcessingIO(device: room, voiceFormat: try .voice(sampleRate: 16000), settings: settings,
                                         logger: Logger(label: "test") { _ in CapturingHandler(captured: captured) })
        try unit.start()
        try room.run(periods: 100)    // 1 s of voice into a 200 ms ring nobody reads
        unit.stop()

        let entries = captured.entries
        let dropped = entries.filter { $0.level == .warning && $0.message.contains("processed voice dropped") }
        #expect(dropped.count == 1)
        #expect(entries.contains { $0.level == .debug && $0.message == "stopped" })
        #expect(unit.statistics.inputOverflowFrameCount > 0)
        #expect(!dropped.contains { pthread_equal($0.thread, pthread_self()) != 0 },
                "logged on the diagnostics queue, not the thread that ran the device periods")
    }
}
