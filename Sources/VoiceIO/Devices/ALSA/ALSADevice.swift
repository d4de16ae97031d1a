/// A duplex `AudioDevice` over alsa-lib: one capture PCM and one playback PCM run in lock step.
///
/// `open` negotiates the capture PCM first (rate near the request, S16_LE or FLOAT_LE interleaved, 1 or 2
/// channels, the requested period and buffer), then the playback PCM at exactly the capture's rate and period.
/// `start` links the PCMs when the plugins allow (`snd_pcm_link`), otherwise prefills playback with silence and
/// starts both back to back, and runs the cycle on its own thread (`SCHED_FIFO` when permitted).
/// Life cycle and thread rules are those of `AudioDevice`; `timing` and `statistics` are safe from any thread.
public final class ALSADevice: AudioDevice, @unchecked Sendable {
    /// Knobs beyond `DeviceConfiguration`.
    public struct Options: Sendable, Hashable {
        /// Sample types in order of preference.
        public var sampleTypes: [SampleType]
        /// Channel counts in order of preference (1 or 2).
        public var channelCounts: [Int]
        /// `SCHED_FIFO` priority for the I/O thread, or nil to keep the default scheduler.
        public var realTimePriority: Int32?
        /// How long `stop` waits for the I/O thread, in milliseconds.
        public var stopTimeoutMilliseconds: Int
        /// Periods the playback queue may grow by, one per playback underrun, beyond the requested buffer less a
        /// period it starts with (the playback PCM is opened with that much more buffer). A starved server (our
        /// PulseAudio loopback on a loaded machine: an underrun every 3 s with 30 ms queued, none in 36 s with 70 ms)
        /// so trades a little latency for fewer cuts, as PulseAudio's own loopback does. The room costs nothing on
        /// PulseAudio until it is used; PipeWire's PulseAudio server sizes its latency by the buffer, and there the
        /// `pulse` plugin's echo delay is 41 ms instead of 31 ms from the start. 0: never grows, no room.
        public var playbackGrowthPeriods: Int

        public init(sampleTypes: [SampleType] = [.int16, .float32], channelCounts: [Int] = [1, 2],
                    realTimePriority: Int32? = 40, stopTimeoutMilliseconds: Int = 2000, playbackGrowthPeriods: Int = 4) {
            self.sampleTypes = sampleTypes
            self.channelCounts = channelCounts
            self.realTimePriority = realTimePriority
            self.stopTimeoutMilliseconds = stopTimeoutMilliseconds
            self.playbackGrowthPeriods = playbackGrowthPeriods
        }
    }

    public let playbackName: String
    public let captureName: String
    public let config: ALSAConfig?
    public let options: Options
    /// What the capture PCM gave at the last `open`.
    public private(set) var captureSettings: ALSAStreamSettings?
    /// What the playback PCM gave at the last `open`.
    public private(set) var playbackSettings: ALSAStreamSettings?

    private var capture: ALSAPCM?
    private var playback: ALSAPCM?
    private var ioThread: ALSAIOThread?
    /// Playback buffering each start begins with: the requested buffer, or the PCM's whole buffer when smaller.
    private var startingBufferFrames = 0
    private let counters = ALSADeviceCounters()

    /// A device playing to `playbackName` and capturing from `captureName`, looked up in `config` when given
    /// (otherwise in the global ALSA configuration). Nothing is opened until `open`.
    public init(playbackName: String, captureName: String, config: ALSAConfig? = nil, options: Options = Options()) {
        self.playbackName = playbackName
        self.captureName = captureName
        self.config = config
        self.options = options
    }

    /// A device playing to and capturing from the same PCM name.
    public convenience init(name: String, config: ALSAConfig? = nil, options: Options = Options()) {
        self.init(playbackName: name, captureName: name, config: config, options: options)
    }

    public var name: String {
        playbackName == captureName ? "alsa:\(playbackName)" : "alsa:\(playbackName)|\(captureName)"
    }

    /// Opens and configures both PCMs; returns the rate and period of the capture side (the cycle's) and the
    /// playback buffer. Stops a running cycle first. Not real-time safe.
    public func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        stop()
        capture = nil
        playback = nil
        captureSettings = nil
        playbackSettings = nil
        let captureRequest = ALSAHardwareRequest(
            sampleRate: requested.sampleRate, periodFrames: requested.periodFrames,
            bufferFrames: requested.bufferFrames, sampleTypes: options.sampleTypes, channelCounts: options.channelCounts)
        let newCapture = try ALSAPCM(name: captureName, direction: .capture, config: config)
        let captureGiven = try newCapture.configure(captureRequest)
        var playbackRequest = captureRequest
        playbackRequest.sampleRate = captureGiven.format.sampleRate
        playbackRequest.requiresExactRate = true
        playbackRequest.periodFrames = captureGiven.periodFrames
        playbackRequest.bufferFrames = requested.bufferFrames + options.playbackGrowthPeriods * captureGiven.periodFrames
        let newPlayback = try ALSAPCM(name: playbackName, direction: .playback, config: config)
        let playbackGiven = try newPlayback.configure(playbackRequest)
        capture = newCapture
        playback = newPlayback
        captureSettings = captureGiven
        playbackSettings = playbackGiven
        startingBufferFrames = min(requested.bufferFrames, playbackGiven.bufferFrames)
        return DeviceConfiguration(sampleRate: captureGiven.format.sampleRate, periodFrames: captureGiven.periodFrames,
                                   bufferFrames: startingBufferFrames)
    }

    /// Starts both directions and the I/O thread calling `cycle` once per period. Not real-time safe.
    public func start(_ cycle: @escaping DeviceIOCycle) throws {
        guard let capture, let playback, let captureSettings, let playbackSettings else {
            throw ALSAError("start before open", deviceName: captureName, code: -77)
        }
        stop()
        counters.reset()
        let thread = try ALSAIOThread(capture: capture, captureSettings: captureSettings, playback: playback,
                                      playbackSettings: playbackSettings, startingBufferFrames: startingBufferFrames,
                                      cycle: cycle, counters: counters,
                                      realTimePriority: options.realTimePriority)
        try thread.start()
        ioThread = thread
    }

    /// Stops the I/O thread (waiting at most `options.stopTimeoutMilliseconds`) and both PCMs. Not real-time safe.
    public func stop() {
        ioThread?.stop(timeoutMilliseconds: options.stopTimeoutMilliseconds)
        ioThread = nil
    }

    public var timing: DeviceTiming { counters.timing }

    /// The alsa-lib error that ended the I/O cycle: the failing PCM could not be brought back after an xrun or
    /// error within `ALSAIOThread.maximumFutileRecoveries` attempts (a PulseAudio server gone, a USB device
    /// unplugged). Nil while running and after a normal `stop`; cleared by `start`. Safe from any thread.
    public var failure: (any Error)? { alsaFailure }

    /// `failure` with its type.
    public var alsaFailure: ALSAError? {
        let code = counters.failureCode.load(ordering: .acquiring)
        guard code != 0 else { return nil }
        let pcmName = counters.failureIsPlayback.load(ordering: .relaxed) ? playbackName : captureName
        return ALSAError("keep the stream running", deviceName: pcmName, code: code)
    }

    /// Counts kept by the I/O thread since the last `start`. Safe from any thread.
    public var statistics: ALSADeviceStatistics {
        ALSADeviceStatistics(
            cycleCount: counters.cycleCount.load(ordering: .relaxed),
            capturedFrameCount: counters.capturedFrameCount.load(ordering: .relaxed),
            droppedPlaybackFrameCount: counters.droppedPlaybackFrameCount.load(ordering: .relaxed),
            waitTimeoutCount: counters.waitTimeoutCount.load(ordering: .relaxed),
            ioThreadCPUNanoseconds: counters.ioThreadCPUNanoseconds.load(ordering: .relaxed),
            playbackQueueFrames: counters.playbackQueueFrames.load(ordering: .relaxed))
    }

    deinit { stop() }
}

/// What an `ALSADevice`'s I/O thread counted since its last start.
public struct ALSADeviceStatistics: Sendable, Hashable {
    /// Calls of the I/O cycle.
    public var cycleCount: Int
    /// Frames read from the capture PCM.
    public var capturedFrameCount: Int
    /// Playback frames the PCM had no room for (capture clock running ahead), dropped.
    public var droppedPlaybackFrameCount: Int
    /// Waits for capture that hit the poll timeout (a stalled device).
    public var waitTimeoutCount: Int
    /// CPU time the I/O thread used, in nanoseconds; known once it has stopped (0 before).
    public var ioThreadCPUNanoseconds: Int
    /// Frames of silence the playback queue starts with at each (re)start: the starting buffer less a period,
    /// grown a period per playback underrun (`Options.playbackGrowthPeriods`).
    public var playbackQueueFrames: Int
}
