import VoiceIO

/// Wraps a device and lends each period to taps: the raw capture (device rate, before any processing) before
/// the unit sees it, and the playback (what the loudspeaker plays) after the unit wrote it, e.g. to record the
/// microphone and the loudspeaker for A/B listening or latency measurement. Everything else is the wrapped
/// device's.
public final class TapDevice: AudioDevice {
    public typealias Tap = (UnsafeBufferPointer<Float>) -> Void
    public let wrapped: any AudioDevice
    private let captureTap: Tap?
    private let playbackTap: Tap?

    /// The taps run on the real-time thread and must be real-time safe.
    public init(_ wrapped: any AudioDevice, capture: Tap? = nil, playback: Tap? = nil) {
        self.wrapped = wrapped
        captureTap = capture
        playbackTap = playback
    }

    public var name: String { wrapped.name }
    public var timing: DeviceTiming { wrapped.timing }
    public var failure: (any Error)? { wrapped.failure }

    public func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        try wrapped.open(requested: requested)
    }

    public func start(_ cycle: @escaping DeviceIOCycle) throws {
        let (captureTap, playbackTap) = (self.captureTap, self.playbackTap)
        try wrapped.start { capture, playback in
            captureTap?(capture)
            cycle(capture, playback)
            playbackTap?(UnsafeBufferPointer(playback))
        }
    }

    public func stop() { wrapped.stop() }
}
