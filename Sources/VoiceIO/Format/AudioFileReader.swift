import CSndFile

/// Reads an audio file through libsndfile: WAV, FLAC and whatever else it knows, at any rate, integer or float
/// samples, delivered as interleaved Float32 (full scale ±1) or Int16.
///
/// Owns one `SNDFILE`. Reading does file I/O: not real-time safe.
public final class AudioFileReader {
    public let path: String
    /// The file's rate and channels as delivered by `read`: Float32, interleaved.
    public let format: StreamFormat
    /// Frames in the file as libsndfile counts them (from the file's real length when the header claims more).
    public let frameCount: Int
    private let file: OpaquePointer
    /// Float and double samples: libsndfile would hand them to `sf_readf_short` unscaled (or scaled to the
    /// file's own peak), so `read(into:)` for Int16 converts them itself.
    private let isFloatEncoded: Bool

    public init(path: String) throws(AudioFileError) {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { throw .openFailure(path: path) }
        guard let format = try? StreamFormat(sampleRate: Int(info.samplerate), channelCount: Int(info.channels)) else {
            sf_close(file)
            throw .unsupportedFormat(path: path, reason: "\(info.samplerate) Hz, \(info.channels) channels")
        }
        self.file = file
        self.path = path
        self.format = format
        self.frameCount = Int(info.frames)
        let encoding = Int(info.format) & SF_FORMAT_SUBMASK
        self.isFloatEncoded = encoding == SF_FORMAT_FLOAT || encoding == SF_FORMAT_DOUBLE
    }

    deinit { sf_close(file) }

    /// Reads up to `buffer.count / channelCount` interleaved frames; returns the frames read, 0 at the end.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws(AudioFileError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        return try checked(sf_readf_float(file, base, sf_count_t(buffer.count / format.channelCount)))
    }

    /// Reads up to `buffer.count / channelCount` interleaved frames; returns the frames read, 0 at the end.
    /// Float samples are scaled by 32767 and clipped to the Int16 range, as libsndfile does when writing; NaN
    /// (which a damaged or hostile file may hold) reads as 0.
    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        let frames = sf_count_t(buffer.count / format.channelCount)
        guard isFloatEncoded else { return try checked(sf_readf_short(file, base, frames)) }
        let floats = UnsafeMutableBufferPointer<Float>.allocate(capacity: buffer.count)
        defer { floats.deallocate() }
        let framesRead = try checked(sf_readf_float(file, floats.baseAddress!, frames))
        for index in 0..<(framesRead * format.channelCount) {
            let scaled = (floats[index] * 32767).rounded()
            base[index] = scaled.isNaN ? 0 : Int16(min(max(scaled, -32768), 32767))
        }
        return framesRead
    }

    /// Moves the read position to `frame` (0 = the first frame). Not real-time safe.
    public func seek(toFrame frame: Int) throws(AudioFileError) {
        guard sf_seek(file, sf_count_t(frame), SEEK_SET) >= 0 else {
            throw .readFailed(path: path, reason: "cannot seek to frame \(frame): " + String(cString: sf_strerror(file)))
        }
    }

    /// The rest of the file with its channels averaged into one.
    public func readAllMono() throws(AudioFileError) -> [Float] {
        let chunkFrames = 4096
        let channelCount = format.channelCount
        var chunk = [Float](repeating: 0, count: chunkFrames * channelCount)
        var mono: [Float] = []
        mono.reserveCapacity(min(max(frameCount, 0), 1 << 26))
        while true {
            let frames = try chunk.withUnsafeMutableBufferPointer { buffer throws(AudioFileError) in
                try read(into: buffer)
            }
            if frames == 0 { return mono }
            if channelCount == 1 {
                mono.append(contentsOf: chunk[..<frames])
                continue
            }
            chunk.withUnsafeBufferPointer { interleaved in
                for frame in 0..<frames {
                    var sum: Float = 0
                    for channel in 0..<channelCount { sum += interleaved[frame * channelCount + channel] }
                    mono.append(sum / Float(channelCount))
                }
            }
        }
    }

    private func checked(_ frames: sf_count_t) throws(AudioFileError) -> Int {
        guard sf_error(file) == SF_ERR_NO_ERROR else {
            throw .readFailed(path: path, reason: String(cString: sf_strerror(file)))
        }
        return Int(frames)
    }
}
