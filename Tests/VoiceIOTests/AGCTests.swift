import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Automatic gain control")
struct AGCTests {
    static func room(talkerGain: Float) throws -> SimulatedRoomConfiguration {
        var room = SimulatedRoomConfiguration()
        room.noiseDBFS = -75
        let talker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        room.nearTalker = (talker + talker).map { $0 * talkerGain }
        return room
    }

    @Test("a quiet talker is raised towards the target; without AGC the level stays")
    func raisesQuietTalker() throws {
        let seconds = 10.0
        let withAGC = try UnitHarness(room: try Self.room(talkerGain: 0.05), agc: true, recordSeconds: seconds)
        try withAGC.run(seconds: seconds)
        let withoutAGC = try UnitHarness(room: try Self.room(talkerGain: 0.05), agc: false)
        try withoutAGC.run(seconds: seconds)
        let lastSeconds = 16000 * 7
        let raised = Signal.powerDB(withAGC.output, from: lastSeconds) - Signal.powerDB(withoutAGC.output, from: lastSeconds)
        #expect(raised > 10, "AGC raised the talker by \(raised) dB")
        #expect(withAGC.unit.statistics.agcGainDB > 10)
        #expect(withoutAGC.unit.statistics.agcGainDB == 0)
    }

    @Test("on silence (noise floor only) the gain does not climb")
    func doesNotPumpOnSilence() throws {
        var room = SimulatedRoomConfiguration()
        room.noiseDBFS = -60
        let harness = try UnitHarness(room: room, agc: true, recordSeconds: 6)
        try harness.run(seconds: 6)
        let microphone = harness.room.recording().microphone
        let gain = Signal.powerDB(harness.output, from: 16000 * 3) - Signal.powerDB(microphone, from: 48000 * 3)
        #expect(gain < 3, "noise raised by \(gain) dB")
    }
}
