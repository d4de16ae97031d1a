import CAllocCounter
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Real-time path allocations")
struct RealTimeAllocationTests {
    @Test("the running unit and the simulated room allocate nothing per period", arguments: [16000, 11025])
    func noAllocations(voiceRate: Int) throws {
        var room = SimulatedRoomConfiguration()
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        room.driftPPM = 50
        room.loudspeakerDrive = 2
        let harness = try UnitHarness(room: room, voiceRate: voiceRate, far: try Signal.farSpeech(seconds: 4),
                                      agc: true, recordSeconds: 4)
        let sound = SyntheticAudio.sine(frequency: 700, sampleRate: 44100, frameCount: 44100, amplitude: 0.2)
        _ = try sound.withUnsafeBufferPointer { try harness.unit.enqueueOtherAudio($0, sampleRate: 44100) }
        harness.unit.duckOthers = true
        harness.unit.duckingMode = .voiceActivity
        try harness.room.run(periods: 20)
        harness.collect()

        alloc_counter_start()
        try harness.room.run(periods: 100)
        let steady = alloc_counter_stop()
        harness.collect()

        harness.unit.bypassVoiceProcessing = true
        harness.unit.muteOutput = true
        alloc_counter_start()
        try harness.room.run(periods: 100)
        let afterChanges = alloc_counter_stop()

        #expect(steady == 0, "allocations in 100 periods: \(steady)")
        #expect(afterChanges == 0, "allocations in 100 periods after property changes: \(afterChanges)")
        #expect(harness.unit.statistics.periodCount == 220)
    }
}
