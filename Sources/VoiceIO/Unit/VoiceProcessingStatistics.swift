import Synchronization

/// What the unit measured, as of the last device period. A snapshot; read it from any thread while running.
public struct VoiceProcessingStatistics: Sendable, Equatable, Codable {
    /// Echo return loss enhancement: microphone power over processed power while the reference is active, in dB,
    /// smoothed over about half a second. Near 0 in bypass; drops during double talk.
    public var erleDB: Float
    /// ERLE counted over the blocks where it means echo reduction (reference active, and with processing on no
    /// double talk), processing on and bypassed apart, with the blocks skipped by reason; `erleDB` is its live
    /// estimate.
    public var erle: ERLEReport
    /// Bulk delay applied to the echo reference, in milliseconds.
    public var delayMilliseconds: Float
    /// Whether the delay comes from an estimate (false: still the device's reported latency).
    public var isDelayEstimated: Bool
    /// The echo's delay as last measured (the reference-to-microphone correlation peak), in milliseconds; 0 before
    /// the first estimate. The applied delay leads it and only follows it when it leaves the filter's reach.
    public var measuredDelayMilliseconds: Float
    /// Whether the echo canceller found no echo to cancel over the last 3 s of far-end sound
    /// (`EchoPipeline.isNoEchoFound`): a headset, whose microphone hears none of the loudspeaker, or an echo the
    /// filter cannot follow yet. ERLE then comes from suppression alone, and an echo delay found may be a chance
    /// match. False until 3 s were heard.
    public var isNoEchoFound: Bool
    /// Clock drift between capture and playback reported by the device, in ppm.
    public var driftPPM: Double
    /// The captured microphone (device rate), the processed voice (voice rate), the far-end voice played and
    /// the other audio after ducking (device rate).
    public var microphone: Level
    public var processed: Level
    public var farEnd: Level
    public var otherAudio: Level
    /// Captured frames at full scale since the unit started: the microphone (or its gain) clipped. A clipping
    /// microphone distorts the near talker and the echo alike, and the canceller learns nothing from those frames;
    /// lower the capture gain.
    public var microphoneClippedFrameCount: Int
    /// Whether the last period's capture reached full scale (`microphone`'s peak): the microphone clips now.
    public var isMicrophoneClipping: Bool { microphone.reachesFullScale }
    /// Gain the gain control applies now, in dB.
    public var agcGainDB: Float
    /// Gain on other audio now, in dB (0 = not ducked).
    public var duckingGainDB: Float
    public var isDucking: Bool { duckingGainDB < -0.01 }
    /// Device overruns and underruns.
    public var deviceXrunCount: Int
    /// Times the echo canceller's linear filter found its path gone and started over (an echo path that changed).
    public var echoFilterRestartCount: Int
    /// Times the echo came back as the filter had it, only a little later or sooner (as after an audio server's
    /// xrun), and the filter's path, kept aside at a restart, came back moved (`EchoShiftFinder`).
    public var echoPathShiftCount: Int
    /// Processed frames dropped because the app did not read them in time.
    public var inputOverflowFrameCount: Int
    /// Periods in which queued other audio ran out while some was still expected.
    public var otherAudioUnderrunCount: Int
    /// Device periods processed.
    public var periodCount: Int
}

/// The real-time thread's side of the statistics: relaxed atomics, written once per period.
final class StatisticsStore: Sendable {
    let delayMilliseconds = AtomicFloat(0)
    let isDelayEstimated = Atomic<Bool>(false)
    let isNoEchoFound = Atomic<Bool>(false)
    let measuredDelayMilliseconds = AtomicFloat(0)
    let microphoneRMS = AtomicFloat(Level.floorDBFS), microphonePeak = AtomicFloat(Level.floorDBFS)
    let processedRMS = AtomicFloat(Level.floorDBFS), processedPeak = AtomicFloat(Level.floorDBFS)
    let farRMS = AtomicFloat(Level.floorDBFS), farPeak = AtomicFloat(Level.floorDBFS)
    let otherRMS = AtomicFloat(Level.floorDBFS), otherPeak = AtomicFloat(Level.floorDBFS)
    let agcGainDB = AtomicFloat(0)
    let duckingGainDB = AtomicFloat(0)
    let inputOverflowFrameCount = Atomic<Int>(0)
    let microphoneClippedFrameCount = Atomic<Int>(0)
    let otherAudioUnderrunCount = Atomic<Int>(0)
    let periodCount = Atomic<Int>(0)
    let echoFilterRestartCount = Atomic<Int>(0)
    let echoPathShiftCount = Atomic<Int>(0)

    static func store(_ level: Level, rms: borrowing AtomicFloat, peak: borrowing AtomicFloat) {
        rms.store(level.rmsDBFS)
        peak.store(level.peakDBFS)
    }

    func snapshot(timing: DeviceTiming, erle: ERLEMeter) -> VoiceProcessingStatistics {
        VoiceProcessingStatistics(
            erleDB: erle.liveDecibels, erle: erle.report, delayMilliseconds: delayMilliseconds.load(),
            isDelayEstimated: isDelayEstimated.load(ordering: .relaxed),
            measuredDelayMilliseconds: measuredDelayMilliseconds.load(),
            isNoEchoFound: isNoEchoFound.load(ordering: .relaxed), driftPPM: timing.driftPPM,
            microphone: Level(rmsDBFS: microphoneRMS.load(), peakDBFS: microphonePeak.load()),
            processed: Level(rmsDBFS: processedRMS.load(), peakDBFS: processedPeak.load()),
            farEnd: Level(rmsDBFS: farRMS.load(), peakDBFS: farPeak.load()),
            otherAudio: Level(rmsDBFS: otherRMS.load(), peakDBFS: otherPeak.load()),
            microphoneClippedFrameCount: microphoneClippedFrameCount.load(ordering: .relaxed),
            agcGainDB: agcGainDB.load(), duckingGainDB: duckingGainDB.load(),
            deviceXrunCount: timing.xrunCount,
            echoFilterRestartCount: echoFilterRestartCount.load(ordering: .relaxed),
            echoPathShiftCount: echoPathShiftCount.load(ordering: .relaxed),
            inputOverflowFrameCount: inputOverflowFrameCount.load(ordering: .relaxed),
            otherAudioUnderrunCount: otherAudioUnderrunCount.load(ordering: .relaxed),
            periodCount: periodCount.load(ordering: .relaxed))
    }
}
