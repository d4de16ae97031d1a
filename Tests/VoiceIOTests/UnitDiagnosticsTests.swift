import Foundation
import LogCapture
import Logging
import Testing
import VoiceIO
import VoiceIOSimulation

/// The unit's diagnostics go through swift-log, from a thread other than the device's.
@Suite("Unit diagnostics")
struct UnitDiagnosticsTests {
    @Test("voice the app never reads is dropped, counted on the device thread and logged off it")
    func droppedVoiceIsLoggedOffTheDeviceThread() throws {
        let captured = CapturedLog()
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .virtual
        let room = try SimulatedRoom(configuration: configuration)
        var settings = VoiceProcessingSettings()
        settings.inputCapacityMilliseconds = 200
        let unit = try VoiceProcessingIO(device: room, voiceFormat: try .voice(sampleRate: 16000), settings: settings,
                                         logger: captured.logger(label: "test"))
        let clock = ContinuousClock()
        let started = clock.now
        try unit.start()
        try room.run(periods: 100)    // 1 s of voice into a 200 ms ring nobody reads: ~80 periods drop some
        unit.stop()
        let runSeconds = (clock.now - started) / .seconds(1)

        // One line per look (once a second while the drops go on, and once at stop), not one per period. The run
        // is quick in a release build; unoptimised on a loaded machine it may take seconds of wall time.
        let entries = captured.entries
        let dropped = entries.filter { $0.level == .warning && $0.message.contains("processed voice dropped") }
        #expect(dropped.count >= 1)
        #expect(dropped.count <= Int(runSeconds) + 1, "\(dropped.count) lines in \(runSeconds) s")
        #expect(entries.contains { $0.level == .debug && $0.message == "stopped" })
        #expect(unit.statistics.inputOverflowFrameCount > 0)
        #expect(!dropped.contains { pthread_equal($0.thread, pthread_self()) != 0 },
                "logged on the diagnostics queue, not the thread that ran the device periods")
    }

    /// The echo 20 dB louder than the far end's voice drives the microphone past full scale; at 3 dB under it, not.
    @Test("a clipping microphone is counted, frame by frame", arguments: [(-20.0, true), (3.0, false)])
    func clippedMicrophoneFramesAreCounted(echoReturnLossDB: Double, clips: Bool) throws {
        var room = UnitTests.room()
        room.echoReturnLossDB = echoReturnLossDB
        let harness = try UnitHarness(room: room, far: try Signal.farSpeech(seconds: 3), recordSeconds: 3)
        try harness.run(seconds: 3)
        let microphone = harness.room.recording().microphone
        let atFullScale = microphone.filter { abs($0) >= 32767 / 32768 }.count
        #expect((atFullScale > 0) == clips, "\(atFullScale) frames at full scale")
        #expect(harness.unit.statistics.microphoneClippedFrameCount == atFullScale)
    }

    /// A room whose loudspeaker the microphone does not hear (a headset's: echo return loss 150 dB) and one that
    /// does: the statistics say whether the canceller found echo, once 3 s of far-end sound were heard.
    @Test("a canceller that found no echo is reported", arguments: [(150.0, true), (6.0, false)])
    func absentEchoIsReported(echoReturnLossDB: Double, isAbsent: Bool) throws {
        var room = UnitTests.room()
        room.echoReturnLossDB = echoReturnLossDB
        let harness = try UnitHarness(room: room, far: try Signal.farSpeech(seconds: 6), recordSeconds: 6)
        try harness.run(seconds: 6)
        #expect(harness.unit.statistics.isNoEchoFound == isAbsent)
    }
}
