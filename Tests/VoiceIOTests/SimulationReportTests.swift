import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Simulation report")
struct SimulationReportTests {
    /// A 4 s run with far-end speech in a 60 ms room: the report carries the room's delay (bulk + one period),
    /// the unit's figures as they are, the far-talk levels, and comes back whole from its JSON.
    @Test func reportsTheRunAndRoundTripsThroughJSON() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.clock = .virtual
        configuration.bulkDelayMilliseconds = 60
        let room = try SimulatedRoom(configuration: configuration)
        let unit = try VoiceProcessingIO(device: room, voiceFormat: try StreamFormat.voice(sampleRate: 16000))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("simulation-report-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try AudioFileWriter(path: path, format: try StreamFormat.voice(sampleRate: 16000))
        let far = SyntheticAudio.speechLike(sampleRate: 16000, frameCount: 3 * 16000)
        let session = SimulationSession(unit: unit, farVoice: far, appSound: [], appRate: 48000, writer: writer)
        try session.run(periods: 400, seconds: 4)

        let report = SimulationReport(session: session, seconds: 4)
        #expect(report.device == room.name)
        #expect(report.deviceRate == 48000 && report.voiceRate == 16000 && !report.bypass)
        #expect(report.periodFrames == 480 && report.bufferFrames == unit.deviceConfiguration.bufferFrames)
        #expect(abs((report.roomEchoDelayMilliseconds ?? 0) - 70) < 0.01)  // 60 ms bulk + one 10 ms period
        #expect(report.unit == unit.statistics)
        #expect(report.unit.periodCount >= 400)
        let farTalk = try #require(report.farTalk)
        #expect(farTalk.snapshots > 0 && farTalk.farDBFS > -40 && farTalk.farDBFS < 0)
        let decoded = try ReportJSON.decode(SimulationReport.self, from: try ReportJSON.encode(report))
        #expect(decoded == report)
    }
}
