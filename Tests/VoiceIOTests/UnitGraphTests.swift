import CAllocCounter
import Foundation
import Glibc
import Synchronization
import Testing
@testable import VoiceIO
import VoiceIOSimulation

extension GraphHarness {
    /// The graph of these tests: a file player (looped speech), a ringtone and a 700 Hz render callback at 0.1 on
    /// buses 0, 1 and 2; returns the harness and the player.
    static func threeBuses(room: SimulatedRoomConfiguration) throws -> (GraphHarness, FilePlayerNode) {
        var player: FilePlayerNode?
        let rig = try GraphHarness(room: room) { format in
            let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Fixtures")
            let speech = try FilePlayerNode(path: fixtures.appendingPathComponent("far-speech-16k.wav").path, format: format)
            try speech.schedule(loops: true)
            player = speech
            let step = 2 * Double.pi * 700 / Double(format.sampleRate)
            return [speech, try ToneNode(format: format, pattern: .ringtone), RenderCallbackNode(format: format) { frames, time in
                for index in frames.indices { frames[index] = 0.1 * Float(sin(step * Double(time + index))) }
            }]
        }
        return (rig, try #require(player))
    }
}

@Suite("Audio graph on the unit")
struct UnitGraphTests {
    @Test("three buses playing through the unit: no allocation and no lock per period, also across changes")
    func realTimePath() throws {
        let (rig, player) = try GraphHarness.threeBuses(room: SimulatedRoomConfiguration())
        try rig.run(periods: 30)

        // Positive controls: the counters count on this thread.
        alloc_counter_start()
        let probe = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        let allocationControl = alloc_counter_stop()
        probe.deallocate()
        var mutex = pthread_mutex_t()
        pthread_mutex_init(&mutex, nil)
        lock_counter_start()
        pthread_mutex_lock(&mutex)
        pthread_mutex_unlock(&mutex)
        let lockControl = lock_counter_stop()
        pthread_mutex_destroy(&mutex)
        #expect(allocationControl == 1)
        let countsLocks = LockCounting.isActive  // off under the sanitizers, which take locks of their own
        if countsLocks { #expect(lockControl == 1) }

        func counted(periods: Int) throws -> (allocations: UInt64, locks: UInt64) {
            var allocations: UInt64 = 0, locks: UInt64 = 0
            for _ in 0..<periods {
                alloc_counter_start()
                lock_counter_start()
                try rig.harness.room.run(periods: 1)
                locks += lock_counter_stop()
                allocations += alloc_counter_stop()
                usleep(500)
            }
            rig.harness.collect()
            return (allocations, locks)
        }
        let steady = try counted(periods: 100)
        let playing = rig.harness.unit.statistics.otherAudio.rmsDBFS  // 1.3 s: the ring is on
        rig.mixer.setVolume(decibels: -6, bus: 0)
        rig.mixer.setPan(0.5, bus: 1)
        rig.mixer.setEnabled(false, bus: 2)
        rig.mixer.setOutputVolume(0.5)
        rig.harness.unit.isInputMuted = true
        rig.graph.disconnect(rig.mixer, bus: 2)
        try rig.graph.update()
        let changed = try counted(periods: 100)

        #expect(steady.allocations == 0, "allocations in 100 periods: \(steady.allocations)")
        if countsLocks { #expect(steady.locks == 0, "locks in 100 periods: \(steady.locks)") }
        #expect(changed.allocations == 0, "allocations after changes: \(changed.allocations)")
        if countsLocks { #expect(changed.locks == 0, "locks after changes: \(changed.locks)") }
        #expect(playing > -30, "the mix reaches the unit at \(playing) dBFS")
        #expect(player.underrunCount == 0)
        rig.graph.stop()
        #expect(!rig.harness.unit.isRunning)
    }

    @Test("the mix is ducked per the unit's ducking presets and cancelled from the microphone like the far end")
    func duckedAndCancelled() throws {
        var room = SimulatedRoomConfiguration()
        room.noiseDBFS = nil
        let (rig, _) = try GraphHarness.threeBuses(room: room)
        for bus in 0..<2 { rig.mixer.setEnabled(false, bus: bus, rampMilliseconds: 0) }
        try rig.run(periods: 600)  // 6 s of the 700 Hz callback bus: the canceller converges
        let open = rig.harness.unit.statistics
        #expect(abs(open.otherAudio.rmsDBFS - (-23)) < 0.5, "undocked \(open.otherAudio.rmsDBFS) dBFS")
        let processed = Signal.powerDB(rig.harness.output, from: 16000 * 5)
        #expect(Double(open.microphone.rmsDBFS) - processed >= 25,
                "microphone \(open.microphone.rmsDBFS) dBFS, processed \(processed) dBFS")

        rig.harness.unit.otherAudioDuckingConfiguration = .init(enableAdvancedDucking: false, duckingLevel: .max)
        try rig.run(periods: 50)
        let ducked = rig.harness.unit.statistics
        #expect(abs((open.otherAudio.rmsDBFS - ducked.otherAudio.rmsDBFS) - 25) < 0.5,
                "ducked by \(open.otherAudio.rmsDBFS - ducked.otherAudio.rmsDBFS) dB")
        #expect(rig.harness.unit.otherAudioDuckingConfiguration
            == .init(enableAdvancedDucking: false, duckingLevel: .max))
        rig.harness.unit.otherAudioDuckingConfiguration = .init(enableAdvancedDucking: true, duckingLevel: .min)
        #expect(rig.harness.unit.duckingMode == .voiceActivity)
        #expect(rig.harness.unit.duckingLevelDB == -6)
        rig.graph.stop()
    }
}

@Suite("Muted talker detection")
struct MutedSpeechTests {
    private final class EventLog: Sendable {
        let events = Mutex<[MutedSpeechActivityEvent]>([])
    }

    private func events(room: SimulatedRoomConfiguration, far: [Float], seconds: Double)
        throws -> (events: [MutedSpeechActivityEvent], output: [Float]) {
        let harness = try UnitHarness(room: room, far: far)
        let log = EventLog()
        harness.unit.setMutedSpeechActivityListener { event in log.events.withLock { $0.append(event) } }
        harness.unit.isInputMuted = true
        try harness.run(seconds: seconds)
        harness.unit.waitForMutedSpeechEvents()
        return (log.events.withLock { $0 }, harness.output)
    }

    @Test("a near talker while muted gives started/ended events, on changes only; the uplink is silent")
    func nearTalker() throws {
        var room = SimulatedRoomConfiguration()
        room.nearTalker = try Signal.fixture("near-speech-16k.wav", sampleRate: 48000)
        room.nearTalkerStartSeconds = 1
        let (events, output) = try events(room: room, far: [], seconds: 1 + Double(room.nearTalker.count) / 48000 + 2)
        #expect(output.allSatisfy { $0 == 0 }, "muted uplink carries only silence")
        guard case .started(let start)? = events.first else {
            Issue.record("no muted speech event: \(events)")
            return
        }
        #expect(start > 1 && start < 2, "started at \(start) s")
        // Alternating started/ended, ending with ended once the talker stops.
        for (index, event) in events.enumerated() {
            switch event {
            case .started: #expect(index % 2 == 0, "\(events)")
            case .ended: #expect(index % 2 == 1, "\(events)")
            }
        }
        #expect(events.count % 2 == 0, "\(events)")
    }

    @Test("echo alone (far end talking, nobody near) gives no muted speech event")
    func echoAlone() throws {
        var room = SimulatedRoomConfiguration()
        room.loudspeakerDrive = 2
        let (events, _) = try events(room: room, far: try Signal.farSpeech(seconds: 8), seconds: 8)
        #expect(events.isEmpty, "\(events)")
    }
}
