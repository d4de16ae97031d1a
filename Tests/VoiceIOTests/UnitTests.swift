import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite("VoiceProcessingIO in a simulated room")
struct UnitTests {
    static func room(seconds: Double = 6) -> SimulatedRoomConfiguration {
        var room = SimulatedRoomConfiguration()
        room.echoResponse = .synthetic(rt60Seconds: 0.2)
        room.bulkDelayMilliseconds = 80
        room.echoReturnLossDB = 3
        room.noiseDBFS = -70
        return room
    }

    /// Microphone over processed power during far-end single talk, over the last `seconds` of a run.
    static func erle(_ harness: UnitHarness, lastSeconds: Double) -> Double {
        let microphone = harness.room.recording().microphone
        let deviceRate = harness.room.configuration.sampleRate
        let micEnd = microphone.count, outEnd = harness.output.count
        let micPower = Signal.powerDB(microphone, from: micEnd - Int(lastSeconds * Double(deviceRate)))
        let outPower = Signal.powerDB(harness.output, from: outEnd - Int(lastSeconds * 16000))
        return micPower - outPower
    }

    @Test("echo is cancelled with processing and untouched in bypass")
    func echoCancelledAndBypassNeutral() throws {
        let far = try Signal.farSpeech(seconds: 8)
        let processed = try UnitHarness(room: Self.room(), far: far, recordSeconds: 8)
        try processed.run(seconds: 8)
        let bypassed = try UnitHarness(room: Self.room(), far: far, recordSeconds: 8)
        bypassed.unit.bypassVoiceProcessing = true
        try bypassed.run(seconds: 8)
        let processedERLE = Self.erle(processed, lastSeconds: 4)
        let bypassERLE = Self.erle(bypassed, lastSeconds: 4)
        #expect(processedERLE > 15, "ERLE with processing \(processedERLE) dB")
        #expect(abs(bypassERLE) < 1, "ERLE in bypass \(bypassERLE) dB")
        let stats = processed.unit.statistics
        #expect(stats.erleDB > 10)
        #expect(stats.isDelayEstimated)
        // Echo arrives after 80 ms of air plus one period of device buffering; the aligner leads by 12 ms.
        #expect(abs(Double(stats.delayMilliseconds) - 78) < 15, "delay \(stats.delayMilliseconds) ms")
    }

    @Test("app sounds mixed into the loudspeaker are cancelled from the microphone")
    func appSoundsCancelled() throws {
        let harness = try UnitHarness(room: Self.room(), recordSeconds: 8)
        let sound = try Signal.farSpeech(seconds: 8, sampleRate: 22050)
        var taken = 0
        for _ in 0..<40 {
            taken += try sound[taken...].withUnsafeBufferPointer {
                try harness.unit.enqueueOtherAudio($0, sampleRate: 22050)
            }
            try harness.run(periods: 20)
        }
        #expect(harness.unit.statistics.otherAudio.rmsDBFS > -40)
        let erle = Self.erle(harness, lastSeconds: 4)
        #expect(erle > 15, "ERLE on app sounds \(erle) dB")
    }

    @Test("muting silences the loudspeaker; the reference follows, so the near talker is not cancelled")
    func muteKeepsReferenceHonest() throws {
        var room = Self.room()
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        let harness = try UnitHarness(room: room, far: try Signal.farSpeech(seconds: 6), recordSeconds: 6)
        harness.unit.muteOutput = true
        try harness.run(seconds: 5)
        let played = harness.room.recording().loudspeaker
        #expect(played[960...].allSatisfy { $0 == 0 }, "loudspeaker not silent while muted")
        #expect(harness.unit.statistics.farEnd.rmsDBFS > -40, "far voice still rendered")
        // Nothing played, so the output is the near talker: within a few dB of the microphone.
        let microphone = harness.room.recording().microphone
        let loss = Signal.powerDB(microphone, from: 48000) - Signal.powerDB(harness.output, from: 16000)
        #expect(abs(loss) < 4, "near talker changed by \(loss) dB")
    }

    @Test("two virtual-clock runs give identical output")
    func deterministic() throws {
        var room = Self.room()
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        room.nearTalkerStartSeconds = 1
        room.driftPPM = 100
        let far = try Signal.farSpeech(seconds: 3)
        let first = try UnitHarness(room: room, far: far, agc: true)
        try first.run(seconds: 3)
        let second = try UnitHarness(room: room, far: far, agc: true)
        try second.run(seconds: 3)
        #expect(first.output.count > 40000)
        #expect(first.output == second.output)
    }

    @Test("listeners hear property changes off the setting thread, once per change")
    func listeners() throws {
        let harness = try UnitHarness(room: Self.room())
        let heard = Heard()
        harness.unit.addListener { heard.append($0) }
        harness.unit.bypassVoiceProcessing = true
        harness.unit.bypassVoiceProcessing = true
        harness.unit.duckOthers = true
        harness.unit.duckingLevelDB = -20
        harness.unit.duckingMode = .voiceActivity
        harness.unit.muteOutput = true
        harness.unit.enableAGC = true
        harness.unit.waitForListeners()
        #expect(heard.values == [.bypassVoiceProcessing, .duckOthers, .duckingLevel, .duckingMode, .muteOutput,
                                 .enableAGC])
        #expect(harness.unit.duckingLevelDB == -20)
        #expect(harness.unit.deviceConfiguration.sampleRate == 48000)
    }
}

final class Heard: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [VoiceProcessingProperty] = []
    func append(_ value: VoiceProcessingProperty) { lock.withLock { stored.append(value) } }
    var values: [VoiceProcessingProperty] { lock.withLock { stored } }
}
