import Logging

/// The unit's diagnostics through swift-log, never from the real-time thread: that thread only counts (xruns,
/// dropped voice, the delay estimate), and once a second a `SnapshotWatcher` compares the counts with the last
/// ones and logs what changed: device xruns and their recovery, a device failure, processed voice the app did
/// not read in time, the echo delay found or moved.
final class UnitDiagnostics {
    /// What the watcher reads: the unit's statistics and the device's failure, if any.
    struct Snapshot {
        var statistics: VoiceProcessingStatistics
        var failure: String?
    }

    /// How often the counts are compared, in milliseconds.
    static let intervalMilliseconds = 1000
    /// A delay estimate that moves by more than this is logged, in milliseconds.
    static let delayStepMilliseconds: Float = 5

    let logger: Logger
    private let deviceName: String
    private let watcher: SnapshotWatcher<Snapshot>

    init(logger: Logger, deviceName: String, take: @escaping () -> Snapshot?) {
        self.logger = logger
        self.deviceName = deviceName
        watcher = SnapshotWatcher(label: "VoiceProcessingIO.diagnostics", intervalMilliseconds: Self.intervalMilliseconds,
                                  take: take) { previous, current in
            Self.log(previous, current, deviceName: deviceName, logger: logger)
        }
    }

    /// After the device started. Not real-time safe.
    func start(configuration: DeviceConfiguration, voiceFormat: StreamFormat) {
        logger.debug("started", metadata: ["device": "\(deviceName)", "format": "\(configuration)",
                                          "voice-rate": "\(voiceFormat.sampleRate)"])
        watcher.start()
    }

    /// After the device stopped: logs what changed since the last look. Not real-time safe.
    func stop() {
        guard let last = watcher.stop() else { return }
        logger.debug("stopped", metadata: ["device": "\(deviceName)", "periods": "\(last.statistics.periodCount)",
                                          "xruns": "\(last.statistics.deviceXrunCount)"])
    }

    private static func log(_ previous: Snapshot?, _ current: Snapshot, deviceName: String, logger: Logger) {
        if let failure = current.failure, previous?.failure == nil {
            logger.error("device failed", metadata: ["device": "\(deviceName)", "error": "\(failure)"])
        }
        let now = current.statistics
        let before = previous?.statistics
        let xruns = now.deviceXrunCount - (before?.deviceXrunCount ?? 0)
        if xruns > 0 {
            logger.warning("device xruns recovered", metadata: ["device": "\(deviceName)", "xruns": "\(xruns)",
                                                                "total": "\(now.deviceXrunCount)"])
        }
        let dropped = now.inputOverflowFrameCount - (before?.inputOverflowFrameCount ?? 0)
        if dropped > 0 {
            logger.warning("processed voice dropped: the app did not read it in time",
                           metadata: ["frames": "\(dropped)", "total": "\(now.inputOverflowFrameCount)"])
        }
        let underruns = now.otherAudioUnderrunCount - (before?.otherAudioUnderrunCount ?? 0)
        if underruns > 0 {
            logger.debug("other audio ran out mid-sound", metadata: ["underruns": "\(underruns)"])
        }
        guard now.isDelayEstimated else { return }
        if before?.isDelayEstimated != true {
            logger.debug("echo delay found", metadata: ["milliseconds": "\(tenths(now.measuredDelayMilliseconds))"])
        } else if let before,
                  abs(now.measuredDelayMilliseconds - before.measuredDelayMilliseconds) > delayStepMilliseconds {
            logger.notice("echo delay moved: the echo path changed, the reference is re-aligned", metadata: [
                "from-milliseconds": "\(tenths(before.measuredDelayMilliseconds))",
                "to-milliseconds": "\(tenths(now.measuredDelayMilliseconds))",
            ])
        }
    }

    private static func tenths(_ milliseconds: Float) -> Float { (milliseconds * 10).rounded() / 10 }
}
