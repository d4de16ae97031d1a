import Glibc
import VoiceIO

/// Writes the input to a scratch file and reads it through `AudioFileReader` as the commands do: once in
/// Int16 chunks, once with `readAllMono` (Float32); both must deliver the same number of frames. libsndfile is
/// not instrumented: coverage guidance comes from our wrapper, libsndfile's own bugs surface only as crashes.
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
        let chunk = UnsafeMutableBufferPointer<Int16>.allocate(capacity: chunkFrameCount * channelCount)
        defer { chunk.deallocate() }
        var framesRead = 0
        while framesRead * channelCount < sampleLimit, let frames = try? reader.read(into: chunk), frames > 0 {
            precondition(frames <= chunkFrameCount, "read returned more frames than asked for")
            framesRead += frames
        }
        guard framesRead * channelCount < sampleLimit, let again = try? AudioFileReader(path: scratchPath),
              let mono = try? again.readAllMono() else { return }
        precondition(mono.count == framesRead, "Float32 and Int16 reads disagree on the frame count")
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
