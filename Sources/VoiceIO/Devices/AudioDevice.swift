/// The format and timing a device runs with, as asked for and as given.
///
/// Devices exchange mono `Float32` frames with the unit (the canonical processing format); a device whose
/// hardware has another sample type or channel count converts inside its own I/O cycle.
public struct DeviceConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// Frames per second on both directions.
    public var sampleRate: Int
    /// Frames the device exchanges per I/O cycle.
    public var periodFrames: Int
    /// Frames of playback buffering (periods × period size) the device keeps.
    public var bufferFrames: Int

    public init(sampleRate: Int, periodFrames: Int, bufferFrames: Int) {
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.bufferFrames = bufferFrames
    }

    /// A request for `sampleRate` with periods of `periodMilliseconds` and `periodsPerBuffer` periods buffered.
    public static func request(sampleRate: Int, periodMilliseconds: Double = 10, periodsPerBuffer: Int = 4)
        -> DeviceConfiguration {
        let period = Int(Double(sampleRate) * periodMilliseconds / 1000)
        return DeviceConfiguration(sampleRate: sampleRate, periodFrames: period, bufferFrames: period * periodsPerBuffer)
    }

    public var periodMilliseconds: Double { Double(periodFrames) * 1000 / Double(sampleRate) }

    public var description: String {
        "\(sampleRate) Hz, period \(periodFrames) frames (\(periodMilliseconds) ms), buffer \(bufferFrames) frames"
    }
}

/// Delays and clock rates a device measures, for the unit's echo alignment. Read off the real-time thread.
public struct DeviceTiming: Sendable, Hashable {
    /// Frames between a sample entering the playback buffer and leaving the speaker.
    public var playbackDelayFrames: Int
    /// Frames between a sample reaching the microphone and being delivered to the I/O cycle.
    public var captureDelayFrames: Int
    /// Measured capture rate over measured playback rate, minus one, in parts per million (0 when unknown).
    public var driftPPM: Double
    /// Overruns and underruns the device recovered from.
    public var xrunCount: Int
    /// Whether the I/O thread runs with real-time scheduling.
    public var isRealTimeScheduled: Bool

    public init(playbackDelayFrames: Int = 0, captureDelayFrames: Int = 0, driftPPM: Double = 0,
                xrunCount: Int = 0, isRealTimeScheduled: Bool = false) {
        self.playbackDelayFrames = playbackDelayFrames
        self.captureDelayFrames = captureDelayFrames
        self.driftPPM = driftPPM
        self.xrunCount = xrunCount
        self.isRealTimeScheduled = isRealTimeScheduled
    }
}

/// Called by a device once per period on its I/O thread with `periodFrames` captured frames and room for as
/// many playback frames. Must be real-time safe: no allocation, no lock, no I/O.
public typealias DeviceIOCycle = (_ capture: UnsafeBufferPointer<Float>, _ playback: UnsafeMutableBufferPointer<Float>) -> Void

/// A duplex audio device: captures and plays fixed periods of mono Float32 frames in lock step.
///
/// Life cycle: `open` (off the real-time thread, may be called again after `stop`) → `start` → `stop`.
public protocol AudioDevice: AnyObject {
    /// Human-readable name, e.g. `alsa:default` or `sim`.
    var name: String { get }
    /// Opens the device asking for `requested`; returns what the device gave. Not real-time safe.
    func open(requested: DeviceConfiguration) throws -> DeviceConfiguration
    /// Starts the I/O cycle, calling `cycle` once per period until `stop`. Not real-time safe.
    func start(_ cycle: @escaping DeviceIOCycle) throws
    /// Stops the I/O cycle and waits for the last call of it to return. Never blocks forever.
    func stop()
    /// Delays, drift and xruns as measured so far. Safe to read from any thread while running.
    var timing: DeviceTiming { get }
    /// Why the I/O cycle ended by itself (the device disappeared or could not be restarted after an xrun), or nil
    /// while it runs and after a normal `stop`. Once set the cycle is no longer called; `stop` is still due.
    /// Safe to read from any thread; meant to be polled by whoever watches the device (not real-time safe).
    var failure: (any Error)? { get }
}

extension AudioDevice {
    /// Devices that cannot fail by themselves (a simulated room, a file) never report a failure.
    public var failure: (any Error)? { nil }
}
