import Glibc
import VoiceIO

/// Writes the input to a scratch file and reads it through `AudioFileReader` as the commands do: chunks of
/// Float32 and Int16 alternately (both conversions), then `readAllMono` on a second reader. libsndfile is not
/// instrumented: coverage guidance comes from our wrapper, libsndfile's own bugs surface only as crashes.
enum AudioFileFuzzing {
    /// Samples read from one input at most: a tiny compressed file can claim hours of audio.
    static let sampleLimit = 1 << 20
    static let chunkFrameCount = 1024

    /// One scratch file per process, so parallel fuzzers and test runs do not share it.
    static let scratchPath: String = {
        let folder = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        return "\(folder)/voicefuzz-audio-\(getpid()).bin"
    }()

    static func run(_ input: UnsafeRawBufferPointer) {
        writeScratch(input)
        defer { unlink(scratchPath) }
        guard let reader = try? AudioFileReader(path: scratchPath) else { return }
        let channelCount = reader.format.channelCount
        precondition((1...StreamFormat.maxChannelCount).contains(channelCount), "channel count out of range")
        let chunkSampleCount = chunkFrameCount * channelCount
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: chunkSampleCount)
        let shorts = UnsafeMutableBufferPointer<Int16>.allocate(capacity: chunkSampleCount)
        defer {
            floats.deallocate()
            shorts.deallocate()
        }
        var samplesRead = 0
        var asFloat = true
        while samplesRead < sampleLimit {
            let frames = asFloat ? try? reader.read(into: floats) : try? reader.read(into: shorts)
            guard let frames, frames > 0 else { break }
            precondition(frames <= chunkFrameCount, "read returned more frames than asked for")
            samplesRead += frames * channelCount
            asFloat.toggle()
        }
        guard samplesRead < sampleLimit, let again = try? AudioFileReader(path: scratchPath) else { return }
        if let mono = try? again.readAllMono() {
            precondition(mono.count * channelCount <= samplesRead, "readAllMono read more than the chunked reads")
        }
    }

    private static func writeScratch(_ input: UnsafeRawBufferPointer) {
        let descriptor = open(scratchPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        precondition(descriptor >= 0, "cannot create \(scratchPath): \(String(cString: strerror(errno)))")
        defer { close(descriptor) }
        var written = 0
        while written < input.count {
            let result = write(descriptor, input.baseAddress! + written, input.count - written)
            precondition(result > 0 || errno == EINTR, "cannot write \(scratchPath): \(String(cString: strerror(errno)))")
            written += max(result, 0)
        }
    }
}
