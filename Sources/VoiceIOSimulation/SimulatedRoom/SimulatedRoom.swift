import Glibc
import Synchronization
import VoiceIO

/// A duplex audio device with no hardware: what it plays goes through a simulated echo path back into its
/// microphone, together with a near-end talker and a noise floor.
///
/// ```
/// playback ──(one period of device buffering)──► loudspeaker ─► soft clip ─► drift ─► bulk delay ─► room response ─┐
///                                                                                                                  + ─► capture
///                                          near-end talker ─────────────────────────────────────────────────────── + ─┘
///                                                                                         noise floor ─────────────┘
/// ```
/// The virtual clock runs periods on the caller's thread with `run(periods:)`: bit-for-bit deterministic, as fast
/// as the CPU goes. The real-time clock runs them on a thread of its own paced by the monotonic clock. Either way,
/// the period (echo path, mixing, recording) allocates nothing. `startRecording` keeps what the loudspeaker played
/// and what the microphone heard, on the same time base, for `voicepeer process` to replay.
public final class SimulatedRoom: AudioDevice, @unchecked Sendable {
    public let name = "sim"
    public let configuration: SimulatedRoomConfiguration
    public let periodFrames: Int
    /// The echo's bulk delay as simulated (playback buffering included), in frames.
    public var echoDelayFrames: Int { echoPath.bulkDelayFrames + periodFrames }
    private let echoPath: EchoPath
    private let capture: UnsafeMutableBufferPointer<Float>
    private let playback: UnsafeMutableBufferPointer<Float>
    private let speaker: UnsafeMutableBufferPointer<Float>
    private var noise: NoiseGenerator
    private let noiseAmplitude: Float
    private let nearTalker: NearTalkerStream
    private let nearTalkerPeriod: UnsafeMutableBufferPointer<Float>
    private var cycle: DeviceIOCycle?
    private var ticker: PeriodicThread?
    private let periodCounter = Atomic<Int>(0)
    private let simulationTime = Atomic<Int>(0)
    private var recorder: RoomRecorder?
    /// The period being exchanged, by component. Read it on the device thread, inside the I/O cycle (e.g. from
    /// the unit's input callback): it is written just before the cycle runs. Real-time safe.
    public private(set) var periodComponents = RoomPeriodComponents()

    /// Builds the echo path. Not real-time safe.
    public init(configuration: SimulatedRoomConfiguration = .init()) throws(SimulatedRoomError) {
        guard (8000...192_000).contains(configuration.sampleRate) else {
            throw .invalidConfiguration("device rate \(configuration.sampleRate) Hz is outside 8000–192000 Hz")
        }
        if let rate = configuration.nearTalkerSampleRate, !(8000...192_000).contains(rate) {
            throw .invalidConfiguration("near talker rate \(rate) Hz is outside 8000–192000 Hz")
        }
        guard configuration.periodFrames > 0, configuration.bulkDelayMilliseconds >= 0,
              configuration.bulkDelayMilliseconds <= 2000, abs(configuration.driftPPM) <= 5000 else {
            throw .invalidConfiguration("period, bulk delay (0–2000 ms) or drift (±5000 ppm) out of range")
        }
        self.configuration = configuration
        periodFrames = configuration.periodFrames
        let shape: [Float]
        switch configuration.echoResponse {
        case .synthetic(let rt60):
            guard rt60 > 0, rt60 <= 2 else { throw .invalidConfiguration("RT60 \(rt60) s is outside 0–2 s") }
            shape = ImpulseResponse.synthetic(sampleRate: configuration.sampleRate, rt60Seconds: rt60,
                                              seed: configuration.seed)
        case .samples(let samples, let rate):
            guard !samples.isEmpty, samples.count <= 4 * rate else {
                throw .invalidConfiguration("an impulse response must hold 1 frame to 4 s")
            }
            do {
                shape = try Self.convert(samples, from: rate, to: configuration.sampleRate)
            } catch {
                throw .speex(error)
            }
        }
        let response = ImpulseResponse.scaled(shape, echoReturnLossDB: configuration.echoReturnLossDB)
        do {
            echoPath = try EchoPath(configuration: configuration, impulseResponse: response)
            nearTalker = try NearTalkerStream(configuration: configuration)
        } catch {
            throw .speex(error)
        }
        capture = .allocate(capacity: periodFrames)
        playback = .allocate(capacity: periodFrames)
        speaker = .allocate(capacity: periodFrames)
        nearTalkerPeriod = .allocate(capacity: periodFrames)
        for buffer in [capture, playback, speaker, nearTalkerPeriod] { buffer.initialize(repeating: 0) }
        noise = NoiseGenerator(seed: configuration.seed &+ 0x5EED)
        noiseAmplitude = configuration.noiseDBFS.map { Float(pow(10, $0 / 20)) } ?? 0
    }

    deinit {
        stop()
        for buffer in [capture, playback, speaker, nearTalkerPeriod] { buffer.deallocate() }
    }

    // MARK: AudioDevice

    /// The room runs at its configured rate and period whatever is asked.
    public func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        DeviceConfiguration(sampleRate: configuration.sampleRate, periodFrames: periodFrames,
                            bufferFrames: 2 * periodFrames)
    }

    public func start(_ cycle: @escaping DeviceIOCycle) throws {
        stop()
        self.cycle = cycle
        if configuration.clock == .realTime {
            let thread = PeriodicThread(name: "sim-room", periodNanoseconds: Int(configuration.periodMilliseconds * 1_000_000)) {
                [unowned self] in self.runPeriod()
            }
            do { try thread.start() } catch { throw SimulatedRoomError.threadFailed(error.description) }
            ticker = thread
        }
    }

    public func stop() {
        ticker?.stop()
        ticker = nil
        cycle = nil
    }

    /// One period of playback buffering; the acoustic delay is not a device delay and is left to estimation.
    public var timing: DeviceTiming {
        DeviceTiming(playbackDelayFrames: periodFrames, captureDelayFrames: 0, driftPPM: configuration.driftPPM,
                     xrunCount: 0, isRealTimeScheduled: false)
    }

    // MARK: Virtual clock

    /// Runs `periods` periods on the calling thread (virtual clock, after `start`). Real-time safe itself: it
    /// allocates only what the cycle it calls allocates.
    public func run(periods: Int) throws(SimulatedRoomError) {
        guard configuration.clock == .virtual, let _ = cycle else { throw .notStarted }
        for _ in 0..<periods { runPeriod() }
    }

    /// Periods run so far. Any thread.
    public var periodCount: Int { periodCounter.load(ordering: .relaxed) }

    /// Time the room spent simulating (echo path, talker, noise; not the I/O cycle it calls), in nanoseconds
    /// of CLOCK_MONOTONIC: what a real device would not cost the process. Any thread.
    public var simulationNanoseconds: Int { simulationTime.load(ordering: .relaxed) }

    // MARK: Recording

    /// Starts keeping the loudspeaker and microphone signals, up to `seconds`. Call while stopped.
    public func startRecording(seconds: Double) {
        recorder = RoomRecorder(capacityFrames: Int(seconds * Double(configuration.sampleRate)))
    }

    /// What was recorded so far: loudspeaker and microphone, same length and time base. Call while stopped (or
    /// between virtual-clock runs).
    public func recording() -> (loudspeaker: [Float], microphone: [Float]) {
        recorder?.contents() ?? ([], [])
    }

    // MARK: One period

    private func runPeriod() {
        guard let cycle else { return }
        let period = UnsafeBufferPointer(speaker)
        let simulationStart = Self.monotonicNanoseconds()
        echoPath.process(speaker: period, into: capture)
        addNearEndAndNoise()
        recorder?.append(loudspeaker: period, microphone: UnsafeBufferPointer(capture))
        simulationTime.add(Self.monotonicNanoseconds() - simulationStart, ordering: .relaxed)
        cycle(UnsafeBufferPointer(capture), playback)
        speaker.baseAddress!.update(from: playback.baseAddress!, count: periodFrames)
        periodCounter.add(1, ordering: .relaxed)
    }

    private func addNearEndAndNoise() {
        nearTalker.render(into: nearTalkerPeriod)
        var components = RoomPeriodComponents()
        for index in 0..<periodFrames {
            var sample = capture[index]
            components.echoMeanSquare += sample * sample
            let talker = nearTalkerPeriod[index]
            sample += talker
            components.nearTalkerMeanSquare += talker * talker
            if noiseAmplitude > 0 { sample += noiseAmplitude * noise.nextGaussian() }
            capture[index] = sample
            components.microphoneMeanSquare += sample * sample
        }
        let scale = 1 / Float(periodFrames)
        components.echoMeanSquare *= scale
        components.nearTalkerMeanSquare *= scale
        components.microphoneMeanSquare *= scale
        periodComponents = components
    }

    /// CLOCK_MONOTONIC (a vDSO call: no kernel entry, no lock).
    private static func monotonicNanoseconds() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    private static func convert(_ samples: [Float], from rate: Int, to deviceRate: Int) throws(SpeexError) -> [Float] {
        guard rate != deviceRate else { return samples }
        let converter = try RateConverter(inputRate: rate, outputRate: deviceRate, maximumInputFrames: samples.count)
        var output = [Float](repeating: 0, count: converter.maximumOutputFrames)
        let produced = samples.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { converter.convert(input, into: $0) }
        }
        return Array(output[..<produced])
    }
}
