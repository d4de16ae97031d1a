import VoiceIO

/// The far-end voice for the render callback: Int16 client format, then silence. Real-time safe.
final class VoiceSource: @unchecked Sendable {
    private let samples: [Int16]
    private var position = 0

    init(_ voice: [Float]) { samples = voice.map { Int16((min(max($0, -1), 1) * 32767).rounded()) } }

    func render(_ frames: VoiceFrames) {
        guard case .int16(let buffer) = frames else { return }
        samples.withUnsafeBufferPointer { source in
            for index in buffer.indices {
                buffer[index] = position < source.count ? source[position] : 0
                position += 1
            }
        }
    }
}
