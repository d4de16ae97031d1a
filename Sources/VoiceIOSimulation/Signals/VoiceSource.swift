import VoiceIO

/// Plays a recording through a unit's render callback: its samples in the client format (Float32 or Int16),
/// then silence. `render` is real-time safe; call it from one thread (the device's).
public final class VoiceSource: @unchecked Sendable {
    private let samples: [Float]
    private var position = 0

    /// `voice`: mono samples at the unit's voice rate, full scale 1. Not real-time safe.
    public init(_ voice: [Float]) { samples = voice }

    /// Fills `frames` with the next samples (clipped to full scale for Int16), silence past the end.
    public func render(_ frames: VoiceFrames) {
        samples.withUnsafeBufferPointer { source in
            switch frames {
            case .float32(let buffer):
                for index in buffer.indices { buffer[index] = next(source) }
            case .int16(let buffer):
                for index in buffer.indices { buffer[index] = Int16((min(max(next(source), -1), 1) * 32767).rounded()) }
            }
        }
    }

    private func next(_ source: UnsafeBufferPointer<Float>) -> Float {
        defer { position += 1 }
        return position < source.count ? source[position] : 0
    }
}
