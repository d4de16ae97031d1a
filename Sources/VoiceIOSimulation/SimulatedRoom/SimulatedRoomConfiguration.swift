import VoiceIO

/// The acoustic scene a `SimulatedRoom` plays: echo path, near-end talker, noise and clocks.
public struct SimulatedRoomConfiguration: Sendable {
    /// How the room's I/O cycle is paced.
    public enum Clock: Sendable, Hashable {
        /// `SimulatedRoom.run(periods:)` runs periods on the caller's thread as fast as it can; deterministic.
        case virtual
        /// A thread of the room's own runs one period per period duration of the monotonic clock.
        case realTime
    }

    /// The echo path's shape before the echo return loss is applied.
    public enum EchoResponse: Sendable {
        /// Direct path plus an exponential tail decaying 60 dB in `rt60Seconds`.
        case synthetic(rt60Seconds: Double)
        /// Measured or designed response samples at `sampleRate` (converted to the device rate).
        case samples([Float], sampleRate: Int)
    }

    /// Device rate in Hz (48000, 44100 or 16000 are typical).
    public var sampleRate = 48000
    public var periodMilliseconds = 10.0
    public var clock = Clock.virtual
    public var echoResponse = EchoResponse.synthetic(rt60Seconds: 0.25)
    /// Delay from playback to the echo's direct path (device buffers plus the air), in milliseconds. At least
    /// the room's internal block (about 6 ms at 48 kHz) is always present.
    public var bulkDelayMilliseconds = 60.0
    /// Echo return loss: how much weaker the echo is than the loudspeaker signal, in dB.
    public var echoReturnLossDB = 6.0
    /// Soft clipping of the loudspeaker (tanh with this drive; nil: linear).
    public var loudspeakerDrive: Float?
    /// Capture clock over playback clock minus one, in parts per million (the echo is resampled by it).
    public var driftPPM = 0.0
    /// The near-end talker at `nearTalkerSampleRate`, starting at `nearTalkerStartSeconds`: played once, or
    /// repeated for as long as the room runs with `nearTalkerRepetition`.
    public var nearTalker: [Float] = []
    /// The rate of `nearTalker` in Hz (nil: `sampleRate`). Another rate is converted as the room plays, so a long
    /// recording is held at its own rate (a 16 kHz voice takes a third of the memory it takes at 48 kHz).
    public var nearTalkerSampleRate: Int?
    public var nearTalkerRepetition: NearTalkerRepetition?
    public var nearTalkerStartSeconds = 0.0
    /// White noise floor at the microphone, RMS in dBFS (nil: none).
    public var noiseDBFS: Double? = -65
    /// Seed of the noise and the synthetic response.
    public var seed: UInt64 = 1

    public init() {}

    /// Frames per period.
    public var periodFrames: Int { Int(Double(sampleRate) * periodMilliseconds / 1000) }
}
