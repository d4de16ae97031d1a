import VoiceIO

/// Wraps a device and lends each period's raw capture (device rate, before any processing) to `tap` before
/// the unit sees it, e.g. to record the microphone for A/B listening. Everything else is the wrapped device's.
public final class CaptureTapDevice: AudioDevice {
    public let wrapped: any AudioDevice
    private let tap: (UnsafeBufferPointer<Float>) -> Void

    /// `tap` runs on the real-time thread and must be real-time safe.
    public init(_ wrapped: any AudioDevice, tap: @escaping (UnsafeBufferPointer<Float>) -> Void) {
        self.wrapped = wrapped
        self.tap = tap
    }

    public var name: String { wrapped.name }
    public var timing: DeviceTiming { wrapped.timing }

    public func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        try wrapped.open(requested: requested)
    }

    public func start(_ cycle: @escaping DeviceIOCycle) throws {
        let tap = self.tap
        try wrapped.start { capture, playback in
            tap(capture)
            cycle(capture, playback)
        }
    }

    public func stop() { wrapped.stop() }
}
