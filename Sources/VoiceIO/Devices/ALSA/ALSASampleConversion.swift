/// Converts between a PCM's interleaved frames (S16_LE or FLOAT_LE, 1 or 2 channels) and the cycle's mono Float32.
///
/// Capture mixes channels down by averaging; playback copies the mono signal to every channel. Int16 maps
/// ±32768 to ±1.0; playback clips to the Int16 range and rounds. All functions are real-time safe.
enum ALSASampleConversion {
    static let int16Scale: Float = 32768

    /// Mixes `frameCount` interleaved frames of `format` at `source` into mono `destination`.
    static func mono(from source: UnsafeRawPointer, format: StreamFormat, frameCount: Int,
                     into destination: UnsafeMutablePointer<Float>) {
        let channels = format.channelCount
        let gain = 1 / Float(channels)
        switch format.sampleType {
        case .int16:
            let samples = source.assumingMemoryBound(to: Int16.self)
            for frame in 0..<frameCount {
                var sum: Float = 0
                for channel in 0..<channels { sum += Float(samples[frame * channels + channel]) }
                destination[frame] = sum * gain / int16Scale
            }
        case .float32:
            let samples = source.assumingMemoryBound(to: Float.self)
            for frame in 0..<frameCount {
                var sum: Float = 0
                for channel in 0..<channels { sum += samples[frame * channels + channel] }
                destination[frame] = sum * gain
            }
        }
    }

    /// Spreads `frameCount` mono frames at `source` over every channel of `format` at `destination`.
    static func interleave(_ source: UnsafePointer<Float>, frameCount: Int, format: StreamFormat,
                           into destination: UnsafeMutableRawPointer) {
        let channels = format.channelCount
        switch format.sampleType {
        case .int16:
            let samples = destination.assumingMemoryBound(to: Int16.self)
            for frame in 0..<frameCount {
                let scaled = (source[frame] * int16Scale).rounded()
                let value = Int16(min(max(scaled, -32768), 32767))
                for channel in 0..<channels { samples[frame * channels + channel] = value }
            }
        case .float32:
            let samples = destination.assumingMemoryBound(to: Float.self)
            for frame in 0..<frameCount {
                for channel in 0..<channels { samples[frame * channels + channel] = source[frame] }
            }
        }
    }
}
