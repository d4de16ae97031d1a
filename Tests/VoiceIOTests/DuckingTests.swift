import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Ducking other audio")
struct DuckingTests {
    @Test("other audio drops by the ducking level while the far end talks, with bounded ramps, and comes back")
    func voiceActivityDucking() throws {
        var room = SimulatedRoomConfiguration()
        room.noiseDBFS = nil
        // Far end: 1 s silence, 1.5 s of tone (voice), then silence.
        let far = [Float](repeating: 0, count: 16000)
            + SyntheticAudio.sine(frequency: 300, sampleRate: 16000, frameCount: 24000, amplitude: 0.3)
        let harness = try UnitHarness(room: room, far: far)
        harness.unit.duckOthers = true
        harness.unit.duckingLevelDB = -20
        harness.unit.duckingMode = .voiceActivity
        let sound = SyntheticAudio.sine(frequency: 1000, sampleRate: 48000, frameCount: 48000 * 5, amplitude: 0.1)
        var taken = 0
        var levels: [Float] = []
        for _ in 0..<450 {
            taken += try sound[taken...].withUnsafeBufferPointer {
                try harness.unit.enqueueOtherAudio($0, sampleRate: 48000)
            }
            try harness.room.run(periods: 1)
            levels.append(harness.unit.statistics.otherAudio.rmsDBFS)
        }
        harness.collect()
        let open = levels[50]            // 0.5 s: nobody talks
        let ducked = levels[200]         // 2 s: far end talking
        let restored = levels[440]       // 4.4 s: 1.9 s after the far end stopped
        #expect(abs(open - (-23)) < 0.5, "undocked level \(open) dBFS")
        #expect(abs((open - ducked) - 20) < 0.5, "ducked by \(open - ducked) dB")
        #expect(abs(restored - open) < 0.3, "restored to \(restored) dBFS")
        let steps = zip(levels.dropFirst(), levels).map { $0 - $1 }
        // Attack: 20 dB over 40 ms is 5 dB per 10 ms period; release: 20 dB over 300 ms is 0.67 dB per period.
        #expect((steps.min() ?? 0) >= -5.5, "fastest fall \(steps.min() ?? 0) dB per period")
        #expect((steps.max() ?? 0) <= 1.0, "fastest rise \(steps.max() ?? 0) dB per period")
    }

    @Test("in the always mode other audio stays ducked by the level; off restores it")
    func alwaysDucking() throws {
        let harness = try UnitHarness(room: SimulatedRoomConfiguration())
        harness.unit.duckOthers = true
        harness.unit.duckingLevelDB = -12
        let sound = SyntheticAudio.sine(frequency: 500, sampleRate: 16000, frameCount: 16000 * 3, amplitude: 0.1)
        _ = try sound.withUnsafeBufferPointer { try harness.unit.enqueueOtherAudio($0, sampleRate: 16000) }
        try harness.room.run(periods: 100)
        let ducked = harness.unit.statistics
        #expect(abs(ducked.duckingGainDB - (-12)) < 0.01)
        #expect(abs(ducked.otherAudio.rmsDBFS - (-23 - 12)) < 0.5)
        harness.unit.duckOthers = false
        try harness.room.run(periods: 60)
        #expect(harness.unit.statistics.duckingGainDB == 0)
    }
}
