import Logging
import Synchronization

//  The voice-processing I/O unit (after Apple's Voice-Processing I/O). One device period per I/O cycle:
//
//                          element 0 (output)
//   render callback ──► voice block ──► up-convert ──► far FIFO ──┐
//   (voice rate, app)                   (voice→device)            │
//   enqueueOtherAudio ─► convert (app thread) ─► ring ┐
//   (any rate)                                       │
//   AudioGraph mix (VoiceUnitNode) ──────────────────┴─► Ducker ──┴─► mix ─► clip ─► mute ramp ─┬─► device playback
//                                                     (-N dB, voice-activity ramps)             │
//                                                                                echo reference │ (= what is played)
//                          element 1 (input)                                                    ▼
//   device capture ──► down-convert ──► mic FIFO ─────────────────────────────────┐    down-convert ─► ref FIFO
//   (device rate)      (device→voice)                                             │                      │
//                                                       EchoAligner ◄─────────────┼──────────────────────┤
//                                                        (bulk delay) ──► DelayLine ◄────────────────────┘
//                                                                             │
//                         ┌───────────────────────────────────────────────────┘ aligned reference
//                         ▼
//   mic block ──► EchoPipeline: MDF echo canceller ─► noise + residual echo suppression ─► AGC ──► input ring
//            └──► PassThroughProcessor (bypass; one block cross-fade when switching) ──────────────►  (voice rate)
//                                                                  input callback ◄── frames ready ──┘ readInput
//
//  Corners: the device imposes its rate on the outer sides; the app's voice format (8–48 kHz mono, Int16 or
//  Float32) is the inner side of both elements. Conversion is skipped when the rates match.

/// How the unit is built. Fixed at creation.
public struct VoiceProcessingSettings: Sendable, Hashable {
    /// The processing stage's tuning.
    public var pipeline = EchoPipelineSettings()
    /// The device rate to ask for; the device may give another.
    public var requestedDeviceRate = 48000
    /// The device period to ask for, in milliseconds.
    public var periodMilliseconds = 10.0
    /// The processing stage's block, in milliseconds: 10, or 5 to halve the processing delay (the residual echo
    /// suppressor and the noise suppressor each hold one block back: 20 ms in all at 10 ms, 10 ms at 5 ms) for
    /// about twice the echo canceller's cost per second (its filter spans twice as many blocks).
    public var processingBlockMilliseconds = 10

    /// Processing block durations the stage supports, in milliseconds.
    public static let processingBlockDurations = [5, 10]

    /// Throws `VoiceProcessingError.unsupportedBlock` for a block outside `processingBlockDurations`.
    static func validate(processingBlockMilliseconds milliseconds: Int) throws(VoiceProcessingError) {
        guard processingBlockDurations.contains(milliseconds) else { throw .unsupportedBlock(milliseconds: milliseconds) }
    }
    /// Other audio queued ahead of the loudspeaker, at most, in milliseconds.
    public var otherAudioCapacityMilliseconds = 2000.0
    /// Processed voice kept for the app to read, at most, in milliseconds.
    public var inputCapacityMilliseconds = 1000.0

    public init() {}
}

/// A full-duplex voice unit on top of an `AudioDevice`: far-end voice out, echo-cancelled voice in.
///
/// Build it (opens the device and allocates everything), set the callbacks, `start`, `stop`. Properties can be
/// set from any thread at any time, the real-time thread (a render or input callback) included: setting one takes
/// no lock and allocates nothing, and the I/O cycle picks it up at the next period. Listeners hear about changes
/// on a private queue, within about 10 ms. After `start`, the I/O cycle allocates nothing and takes no lock.
public final class VoiceProcessingIO: @unchecked Sendable {
    /// The app's voice format (both elements).
    public let voiceFormat: StreamFormat
    /// What the device gave.
    public let deviceConfiguration: DeviceConfiguration
    public let device: any AudioDevice
    private let playbackChain: PlaybackChain
    private let captureChain: CaptureChain
    private let otherAudio: OtherAudioInput
    private let inputRing: SPSCRing<Float>
    private let inputScratch: UnsafeMutableBufferPointer<Float>
    private var inputCallback: VoiceInputCallback?
    private let statisticsStore = StatisticsStore()
    private let listeners = PropertyListeners()
    private var diagnostics: UnitDiagnostics!
    private let running = Atomic<Bool>(false)

    private let bypassFlag = Atomic<Bool>(false)
    private let agcFlag = Atomic<Bool>(true)
    private let duckFlag = Atomic<Bool>(false)
    private let duckingLevel = AtomicFloat(-15)
    private let duckingModeValue = Atomic<UInt8>(DuckingMode.always.rawValue)
    private let muteFlag = Atomic<Bool>(false)
    private let inputMuteFlag = Atomic<Bool>(false)
    private let mutedSpeech: MutedSpeechNotifier
    /// Real-time side: the muted talker's state and the device frames captured since start.
    private var mutedSpeechDetector = MutedSpeechDetector()
    private var capturedFrameCount = 0

    /// Opens `device` and prepares the graph. `voiceFormat` must be mono at one of `StreamFormat.voiceRates`.
    /// `logger` hears what happens to the unit (start and stop, device xruns and failure, dropped voice, the echo
    /// delay), from a private queue, never the real-time thread. Not real-time safe.
    public init(device: any AudioDevice, voiceFormat: StreamFormat, settings: VoiceProcessingSettings = .init(),
                logger: Logger = Logger(label: "VoiceIO")) throws(VoiceProcessingError) {
        guard voiceFormat.channelCount == 1 else { throw .notMono(voiceFormat) }
        try VoiceProcessingSettings.validate(processingBlockMilliseconds: settings.processingBlockMilliseconds)
        do {
            _ = try StreamFormat.voice(sampleRate: voiceFormat.sampleRate, sampleType: voiceFormat.sampleType)
        } catch {
            throw .format(error)
        }
        let configuration: DeviceConfiguration
        do {
            configuration = try device.open(requested: .request(sampleRate: settings.requestedDeviceRate,
                                                                periodMilliseconds: settings.periodMilliseconds))
        } catch {
            throw .device(name: device.name, reason: "\(error)")
        }
        self.device = device
        self.voiceFormat = voiceFormat
        deviceConfiguration = configuration
        let timing = device.timing
        do {
            playbackChain = try PlaybackChain(deviceRate: configuration.sampleRate, voiceFormat: voiceFormat,
                                              maximumPeriodFrames: configuration.periodFrames)
            captureChain = try CaptureChain(deviceRate: configuration.sampleRate, voiceRate: voiceFormat.sampleRate,
                                            maximumPeriodFrames: configuration.periodFrames,
                                            blockMilliseconds: settings.processingBlockMilliseconds,
                                            settings: settings.pipeline,
                                            initialDelayFrames: timing.playbackDelayFrames + timing.captureDelayFrames)
        } catch {
            throw .speex(error)
        }
        otherAudio = OtherAudioInput(
            deviceRate: configuration.sampleRate,
            capacityFrames: Int(settings.otherAudioCapacityMilliseconds * Double(configuration.sampleRate) / 1000))
        inputRing = SPSCRing(
            minimumCapacity: Int(settings.inputCapacityMilliseconds * Double(voiceFormat.sampleRate) / 1000),
            filledWith: 0)
        mutedSpeech = MutedSpeechNotifier(sampleRate: configuration.sampleRate)
        inputScratch = .allocate(capacity: 1024)
        inputScratch.initialize(repeating: 0)
        diagnostics = UnitDiagnostics(logger: logger, deviceName: device.name) { [weak self] in
            self.map { UnitDiagnostics.Snapshot(statistics: $0.statistics, failure: $0.device.failure.map { "\($0)" }) }
        }
        listeners.notify(.deviceFormat)
    }

    deinit {
        stop()
        inputScratch.deallocate()
    }

    // MARK: Callbacks and life cycle

    /// Sets the callback that supplies far-end voice. Only while stopped.
    public func setRenderCallback(_ callback: VoiceRenderCallback?) {
        precondition(!isRunning, "set the render callback before start")
        playbackChain.renderCallback = callback
    }

    /// Sets the callback told when processed voice is ready. Only while stopped.
    public func setInputCallback(_ callback: VoiceInputCallback?) {
        precondition(!isRunning, "set the input callback before start")
        inputCallback = callback
    }

    /// Sets what adds an audio graph's mix to the other audio. Only while stopped.
    func setOtherAudioRenderer(_ renderer: OtherAudioRenderer?) {
        precondition(!isRunning, "set the other-audio renderer before start")
        playbackChain.otherAudioRenderer = renderer
    }

    public var isRunning: Bool { running.load(ordering: .acquiring) }

    /// Starts the device's I/O cycle. Not real-time safe.
    public func start() throws(VoiceProcessingError) {
        guard !isRunning else { return }
        running.store(true, ordering: .releasing)
        do {
            try device.start { [unowned self] capture, playback in
                self.ioCycle(capture: capture, playback: playback)
            }
        } catch {
            running.store(false, ordering: .releasing)
            throw .device(name: device.name, reason: "\(error)")
        }
        diagnostics.start(configuration: deviceConfiguration, voiceFormat: voiceFormat)
    }

    /// Stops the device and waits for its last cycle. Not real-time safe.
    public func stop() {
        guard isRunning else { return }
        device.stop()
        running.store(false, ordering: .releasing)
        diagnostics.stop()
    }

    // MARK: Data

    /// Processed voice frames ready to read. Real-time safe.
    public var availableInputFrameCount: Int { inputRing.availableToRead }

    /// Copies up to `frames.frameCount` processed voice frames out; returns how many. Call from the input
    /// callback or from one other thread (a single reader). Real-time safe.
    public func readInput(into frames: VoiceFrames) -> Int {
        switch frames {
        case .float32(let buffer):
            return inputRing.read(into: buffer)
        case .int16(let buffer):
            var done = 0
            while done < buffer.count {
                let chunk = UnsafeMutableBufferPointer(rebasing: inputScratch[..<min(inputScratch.count, buffer.count - done)])
                let count = inputRing.read(into: chunk)
                guard count > 0 else { break }
                SampleConversion.int16(from: UnsafeBufferPointer(rebasing: chunk[..<count]),
                                       into: UnsafeMutableBufferPointer(rebasing: buffer[done...]))
                done += count
            }
            return done
        }
    }

    /// Queues app sounds at `sampleRate` for the loudspeaker mix (they are cancelled from the microphone too).
    /// Converts on the calling thread; returns how many of `frames` were taken (the rest did not fit yet).
    /// Call from one thread at a time per stream. Not real-time safe.
    public func enqueueOtherAudio(_ frames: UnsafeBufferPointer<Float>, sampleRate: Int) throws(VoiceProcessingError)
        -> Int {
        do {
            return try otherAudio.enqueue(frames, sampleRate: sampleRate)
        } catch {
            throw .speex(error)
        }
    }

    /// Other audio queued and not yet played, in device-rate frames.
    public var queuedOtherAudioFrameCount: Int { otherAudio.ring.availableToRead }

    // MARK: Properties (any thread, any time, real-time safe to set and read; applied at the next period)

    /// Skips echo cancellation, noise and residual echo suppression and gain control; conversion stays.
    public var bypassVoiceProcessing: Bool {
        get { bypassFlag.load(ordering: .relaxed) }
        set { update(bypassFlag, newValue, .bypassVoiceProcessing) }
    }

    /// Automatic gain control on the processed voice (on by default).
    public var enableAGC: Bool {
        get { agcFlag.load(ordering: .relaxed) }
        set { update(agcFlag, newValue, .enableAGC) }
    }

    /// Lowers other audio by `duckingLevelDB` (see `duckingMode`).
    public var duckOthers: Bool {
        get { duckFlag.load(ordering: .relaxed) }
        set { update(duckFlag, newValue, .duckOthers) }
    }

    /// How far other audio is lowered while ducked, in dB (negative; clamped to -60...0).
    public var duckingLevelDB: Float {
        get { duckingLevel.load() }
        set {
            let clamped = min(max(newValue, -60), 0)
            guard clamped != duckingLevel.load() else { return }
            duckingLevel.store(clamped)
            listeners.notify(.duckingLevel)
        }
    }

    public var duckingMode: DuckingMode {
        get { DuckingMode(rawValue: duckingModeValue.load(ordering: .relaxed)) ?? .always }
        set {
            guard duckingModeValue.exchange(newValue.rawValue, ordering: .relaxed) != newValue.rawValue else { return }
            listeners.notify(.duckingMode)
        }
    }

    /// Silences the loudspeaker (with a one-period ramp). The echo reference follows: it is what is played.
    public var muteOutput: Bool {
        get { muteFlag.load(ordering: .relaxed) }
        set { update(muteFlag, newValue, .muteOutput) }
    }

    /// Mutes the uplink (Apple's input mute): the app reads silence while processing and near-end voice detection
    /// go on, so a `MutedSpeechActivityEvent` listener hears when the user talks while muted.
    public var isInputMuted: Bool {
        get { inputMuteFlag.load(ordering: .relaxed) }
        set { update(inputMuteFlag, newValue, .inputMuted) }
    }

    /// Calls `handler` on a private queue (polled every 20 ms) when muted speech starts or ends: on changes only,
    /// from the near-end voice detector (echo alone does not count); nil removes it. Not real-time safe.
    public func setMutedSpeechActivityListener(_ handler: (@Sendable (MutedSpeechActivityEvent) -> Void)?) {
        mutedSpeech.setHandler(handler)
    }

    /// Delivers every muted speech event detected so far to the listener before returning. Not real-time safe.
    public func waitForMutedSpeechEvents() { mutedSpeech.drain() }

    private func update(_ flag: borrowing Atomic<Bool>, _ value: Bool, _ property: VoiceProcessingProperty) {
        guard flag.exchange(value, ordering: .relaxed) != value else { return }
        listeners.notify(property)
    }

    // MARK: Listeners and statistics

    /// Calls `handler` off the real-time thread after each property or device-format change; returns an id for
    /// `removeListener`. Not real-time safe.
    @discardableResult
    public func addListener(_ handler: @escaping @Sendable (VoiceProcessingProperty) -> Void) -> Int {
        listeners.add(handler)
    }

    public func removeListener(_ id: Int) { listeners.remove(id) }

    /// Blocks until every listener notification issued so far has been delivered. Not real-time safe.
    public func waitForListeners() { listeners.drain() }

    /// What the unit measured so far. Safe from any thread while running.
    public var statistics: VoiceProcessingStatistics { statisticsStore.snapshot(timing: device.timing, erle: captureChain.erle) }

    /// Processed voice latency added by rate conversion, in voice-rate frames.
    public var conversionLatencyFrames: Int { captureChain.latencyFrames }

    /// Processed voice latency added by voice processing (echo suppression and preprocessor blocks), in
    /// voice-rate frames; none while bypassed.
    public var processingLatencyFrames: Int { captureChain.processingLatencyFrames }

    // MARK: The I/O cycle (real-time thread)

    private func ioCycle(capture: UnsafeBufferPointer<Float>, playback: UnsafeMutableBufferPointer<Float>) {
        let count = min(capture.count, playback.count)
        let period = UnsafeMutableBufferPointer(rebasing: playback[..<count])
        let mode = DuckingMode(rawValue: duckingModeValue.load(ordering: .relaxed)) ?? .always
        playbackChain.render(into: period, otherAudio: otherAudio.ring,
                             duckLevelDB: duckFlag.load(ordering: .relaxed) ? duckingLevel.load() : nil,
                             duckOnVoiceOnly: mode == .voiceActivity,
                             nearVoiceActive: captureChain.isNearVoiceActive,
                             mute: muteFlag.load(ordering: .relaxed))
        var dropped = 0
        let microphone = UnsafeBufferPointer(rebasing: capture[..<count])
        let inputMuted = inputMuteFlag.load(ordering: .relaxed)
        let written = captureChain.process(capture: microphone, reference: UnsafeBufferPointer(period),
                                           bypass: bypassFlag.load(ordering: .relaxed),
                                           agc: agcFlag.load(ordering: .relaxed), mute: inputMuted,
                                           output: inputRing, droppedFrames: &dropped)
        capturedFrameCount += count
        if let started = mutedSpeechDetector.update(
            nearVoiceActive: captureChain.isNearTalkerActive, muted: inputMuted,
            periodMilliseconds: Double(count) * 1000 / Double(deviceConfiguration.sampleRate)) {
            mutedSpeech.post(started: started, atFrame: capturedFrameCount)
        }
        publishStatistics(microphone: microphone, droppedFrames: dropped)
        if written > 0, let inputCallback { inputCallback(inputRing.availableToRead) }
    }

    private func publishStatistics(microphone: UnsafeBufferPointer<Float>, droppedFrames: Int) {
        let store = statisticsStore
        let microphoneLevel = LevelMeter.measure(microphone)
        StatisticsStore.store(microphoneLevel, rms: store.microphoneRMS, peak: store.microphonePeak)
        StatisticsStore.store(captureChain.processedLevel, rms: store.processedRMS, peak: store.processedPeak)
        StatisticsStore.store(playbackChain.farLevel, rms: store.farRMS, peak: store.farPeak)
        StatisticsStore.store(playbackChain.otherLevel, rms: store.otherRMS, peak: store.otherPeak)
        store.delayMilliseconds.store(captureChain.delayMilliseconds)
        store.isDelayEstimated.store(captureChain.aligner.realignmentCount > 0, ordering: .relaxed)
        store.isNoEchoFound.store(captureChain.pipeline.isNoEchoFound, ordering: .relaxed)
        let arrivalFrames = captureChain.aligner.arrivalFrames ?? 0
        store.measuredDelayMilliseconds.store(Float(arrivalFrames * 1000 / Double(voiceFormat.sampleRate)))
        store.agcGainDB.store(Float(captureChain.pipeline.agcGainDB))
        store.duckingGainDB.store(playbackChain.ducker.gainDB)
        if droppedFrames > 0 { store.inputOverflowFrameCount.add(droppedFrames, ordering: .relaxed) }
        // Counted only in a period whose peak reached full scale (the level above): most periods need no second pass.
        if microphoneLevel.reachesFullScale {
            store.microphoneClippedFrameCount.add(LevelMeter.fullScaleCount(microphone), ordering: .relaxed)
        }
        store.otherAudioUnderrunCount.store(playbackChain.otherAudioUnderrunCount, ordering: .relaxed)
        store.periodCount.add(1, ordering: .relaxed)
        store.echoFilterRestartCount.store(captureChain.pipeline.divergenceResetCount, ordering: .relaxed)
        store.echoPathShiftCount.store(captureChain.pipeline.pathShiftCount, ordering: .relaxed)
    }
}
