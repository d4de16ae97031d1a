import Testing
import VoiceIO
import VoiceIOSimulation

/// The live unit on the simulated room against `OfflineVoiceProcessor` over the room's recordings (what
/// `scripts/music-echo` compares). The unit gets each period's playback as it renders it, a period before the room
/// plays it, so its reference leads the loudspeaker recording by the device's playback delay; given that lead, the
/// offline run is the live run, sample for sample.
@Suite("Live runs replayed offline")
struct LiveReplayTests {
    struct Run {
        let microphone: [Float]
        let live: [Float]
        let replay: [Float]
        let asRecorded: [Float]
        /// Frames the live output lags the microphone by (conversion and processing); the offline output does not.
        let latencyFrames: Int
    }

    /// `far` at 16 kHz played for `seconds` in the default room, then replayed offline with and without the lead, all
    /// on processing blocks of `blockMilliseconds`.
    static func run(far: [Float], seconds: Double, blockMilliseconds: Int = 10) throws -> Run {
        var settings = VoiceProcessingSettings()
        settings.processingBlockMilliseconds = blockMilliseconds
        let harness = try UnitHarness(room: SimulatedRoomConfiguration(), far: far, recordSeconds: seconds,
                                      settings: settings)
        try harness.run(seconds: seconds)
        let recording = harness.room.recording()
        let deviceRate = harness.room.configuration.sampleRate
        func offline(leadFrames: Int) throws -> [Float] {
            let processor = try OfflineVoiceProcessor(deviceRate: deviceRate, voiceRate: 16000,
                                                      referenceLeadFrames: leadFrames,
                                                      processingBlockMilliseconds: blockMilliseconds)
            processor.enableAGC = false
            return processor.process(microphone: recording.microphone, loudspeaker: recording.loudspeaker)
        }
        return Run(microphone: recording.microphone, live: harness.output,
                   replay: try offline(leadFrames: harness.room.timing.playbackDelayFrames),
                   asRecorded: try offline(leadFrames: 0),
                   latencyFrames: harness.unit.conversionLatencyFrames + harness.unit.processingLatencyFrames)
    }

    /// Largest difference between the live output and an offline one, aligned by the live latency.
    static func largestDifference(_ run: Run, _ offline: [Float]) -> Float {
        let count = min(run.live.count - run.latencyFrames, offline.count)
        var largest: Float = 0
        for index in 0..<count { largest = max(largest, abs(run.live[index + run.latencyFrames] - offline[index])) }
        return largest
    }

    /// Microphone over processed power from `start` to `end` seconds, in dB (microphone at 48 kHz, processed at
    /// 16 kHz and aligned with it). A replay's last period has no reference left (the lead takes it from past the
    /// recording's end), so measure short of the end.
    static func reductionDB(_ run: Run, _ processed: [Float], from start: Double, to end: Double) -> Double {
        Signal.powerDB(run.microphone, from: Int(start * 48000), to: Int(end * 48000))
            - Signal.powerDB(processed, from: Int(start * 16000), to: Int(end * 16000))
    }

    /// Speech: the replay with the lead is the live output exactly. (Without it the delay locks at another block and
    /// the filter starts elsewhere; on music that is several dB apart, below.)
    @Test func speechReplaysExactlyWithThePlaybackLead() throws {
        let run = try Self.run(far: try Signal.fixture("far-speech-16k.wav", sampleRate: 16000), seconds: 4)
        #expect(run.live.count > run.latencyFrames + 3 * 16000, "the live unit produced \(run.live.count) frames")
        #expect(Self.largestDifference(run, run.replay) == 0)
    }

    /// Held music, the music case: live and offline through the same chain, from 10 s to 19.5 s, at least
    /// 30 dB lower (issue 12). Here live (and its replay) reads 35.1 dB and offline as recorded 50.8 dB; on
    /// `scripts/music-echo`'s recording (the music as an app sound, 30 s) 54.4 live and 39.0 offline. Neither
    /// difference is the alignment: the applied delays agree to 0.2 frames, and forcing a run's fractional delay by
    /// ±0.5 frame moved its linear ERLE by at most 0.8 dB. With the reference a period earlier the delay locks at
    /// another block (music-echo's: block 73 live, 41 offline) and the filter starts there; on sustained music its
    /// result depends on where it starts, through the learning rate: once adapted the rate follows the leak
    /// estimate, which stalls on music. The start-up rate kept as a floor while the far end plays alone
    /// (`EchoCanceller.isFarEndAlone`) took these from 36.4 and 29.5 dB, and music-echo's live row from 27.5 dB
    /// (its offline run never leaves the start-up rate). The replay shows the two paths are otherwise one.
    @Test(.enabled(if: Signal.isHeldMusicInstalled, "needs asterisk-moh-opsound-wav"))
    func heldMusicLiveAndOffline() throws {
        let run = try Self.run(far: try Signal.heldMusic(seconds: 20), seconds: 20)
        let live = Self.reductionDB(run, Array(run.live.dropFirst(run.latencyFrames)), from: 10, to: 19.5)
        let replay = Self.reductionDB(run, run.replay, from: 10, to: 19.5)
        let asRecorded = Self.reductionDB(run, run.asRecorded, from: 10, to: 19.5)
        print(String(format: "held music, 10-19.5 s: live %.1f dB, replay %.1f dB, offline as recorded %.1f dB",
                     live, replay, asRecorded))
        #expect(Self.largestDifference(run, run.replay) == 0)
        #expect(abs(live - replay) < 0.01)
        #expect(live >= 30 && asRecorded >= 30, "music reduced by only \(live) dB live, \(asRecorded) dB offline")
    }

    /// The same on a call's 5 ms blocks: here live reads 53.0 dB and offline as recorded 40.9 (the two alignments'
    /// difference, as at 10 ms blocks above). The filter leaves 15-30 dB of music. While a 5 ms block's spectrum
    /// spanned 10 ms, the detector took a passage's onset for a talker in a third of the far-end blocks (a tenth at 10
    /// ms blocks): with its powers averaged over three blocks, 39.9 and 42.1 dB; over two, 29.4 and 28.4; with half the
    /// second linear stage's estimate read as echo left (`stagedEchoShare`), 29.8 and 25.7. Its spectrum spans 20 ms
    /// now (`LowDelayWindows`), each block's powers read alone.
    @Test(.enabled(if: Signal.isHeldMusicInstalled, "needs asterisk-moh-opsound-wav"))
    func heldMusicLiveAndOfflineOnFiveMillisecondBlocks() throws {
        let run = try Self.run(far: try Signal.heldMusic(seconds: 20), seconds: 20, blockMilliseconds: 5)
        let live = Self.reductionDB(run, Array(run.live.dropFirst(run.latencyFrames)), from: 10, to: 19.5)
        let asRecorded = Self.reductionDB(run, run.asRecorded, from: 10, to: 19.5)
        print(String(format: "held music, 5 ms blocks, 10-19.5 s: live %.1f dB, offline as recorded %.1f dB",
                     live, asRecorded))
        #expect(Self.largestDifference(run, run.replay) == 0)
        #expect(live >= 30 && asRecorded >= 30, "music reduced by only \(live) dB live, \(asRecorded) dB offline")
    }
}
