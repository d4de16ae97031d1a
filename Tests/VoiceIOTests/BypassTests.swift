import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("Bypass")
struct BypassTests {
    static func room() throws -> SimulatedRoomConfiguration {
        var room = UnitTests.room()
        room.sampleRate = 16000
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 16000)
        room.nearTalkerStartSeconds = 0.5
        return room
    }

    @Test("bypass passes the microphone through unchanged (single rate: no conversion)")
    func passesMicrophone() throws {
        let harness = try UnitHarness(room: try Self.room(), far: try Signal.farSpeech(seconds: 3), recordSeconds: 3)
        harness.unit.bypassVoiceProcessing = true
        try harness.run(seconds: 3)
        let microphone = harness.room.recording().microphone
        #expect(harness.output.count == microphone.count)
        let differing = zip(harness.output, microphone).filter { $0 != $1 }.count
        #expect(differing == 0, "\(differing) frames differ")
    }

    /// The largest sample-to-sample step in `samples`.
    static func largestStep(_ samples: [Float]) -> Float {
        zip(samples.dropFirst(), samples).map { abs($0 - $1) }.max() ?? 0
    }

    @Test("toggling bypass while running causes no step larger than either mode makes on its own")
    func toggleIsGlitchFree() throws {
        let far = try Signal.farSpeech(seconds: 5)
        let processed = try UnitHarness(room: try Self.room(), far: far)
        try processed.run(seconds: 5)
        let bypassed = try UnitHarness(room: try Self.room(), far: far)
        bypassed.unit.bypassVoiceProcessing = true
        try bypassed.run(seconds: 5)
        let toggled = try UnitHarness(room: try Self.room(), far: far)
        for step in 0..<25 {
            toggled.unit.bypassVoiceProcessing = step % 2 == 1
            try toggled.run(periods: 20)
        }
        let limit = max(Self.largestStep(processed.output), Self.largestStep(bypassed.output))
        #expect(Self.largestStep(toggled.output) <= limit * 1.05)
        // And it really switches: after each cross-fade block, bypass stretches are the microphone exactly.
        for stretch in stride(from: 1, to: 25, by: 2) {
            let range = (stretch * 3200 + 160)..<((stretch + 1) * 3200)
            #expect(toggled.output[range] == bypassed.output[range], "bypass stretch \(stretch) is not the microphone")
        }
        #expect(toggled.output[(4 * 3200 + 160)..<(5 * 3200)] != bypassed.output[(4 * 3200 + 160)..<(5 * 3200)])
    }
}
