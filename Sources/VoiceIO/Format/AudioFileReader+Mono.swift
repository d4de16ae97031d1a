extension AudioFileReader {
    /// The whole file at `path`, mono (channels averaged), converted to `sampleRate` when the file has another
    /// rate. For fixtures and command-line inputs, not streams. Not real-time safe.
    public static func monoSamples(path: String, sampleRate: Int, quality: Int = 8) throws -> [Float] {
        let reader = try AudioFileReader(path: path)
        let samples = try reader.readAllMono()
        guard reader.format.sampleRate != sampleRate else { return samples }
        return try Resampler(inputRate: reader.format.sampleRate, outputRate: sampleRate, quality: quality)
            .convert(samples)
    }
}
