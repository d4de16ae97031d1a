import Glibc
import Synchronization

/// Plays an audio file (after Apple's AUAudioFilePlayer): a streaming thread reads it through libsndfile,
/// averages its channels, converts it to the node's rate and fills a ring; the render thread only copies from the
/// ring. Loops, starts at a graph sample time, plays a region of the file.
///
/// `schedule` while the graph is stopped; `render` is real-time safe.
public final class FilePlayerNode: AudioNode, @unchecked Sendable {
    public let path: String
    /// The file's own rate and channels.
    public let fileFormat: StreamFormat
    /// Frames in the file, at its own rate.
    public let fileFrameCount: Int
    private let reader: AudioFileReader
    private let resampler: Resampler
    private let ring: SPSCRing<Float>
    private let fileChunk: UnsafeMutableBufferPointer<Float>
    private let monoChunk: UnsafeMutableBufferPointer<Float>
    private let convertedChunk: UnsafeMutableBufferPointer<Float>
    private static let chunkFrames = 1024
    private var thread: RepeatingThread?
    /// Streaming side: next file frame to read, and the frames of `monoChunk` not yet converted.
    private var filePosition = 0
    private var pendingStart = 0
    private var pendingCount = 0
    private var region: Range<Int>
    private var loops = false
    private var startSampleTime = 0
    private let reachedEnd = Atomic<Bool>(false)
    private let underruns = Atomic<Int>(0)
    private let readFailure = Mutex<AudioFileError?>(nil)

    /// Opens `path`; `format` is mono Float32 at the graph's rate. `bufferMilliseconds` of converted audio are
    /// kept ahead of the render thread. Not real-time safe.
    public init(name: String? = nil, path: String, format: StreamFormat, bufferMilliseconds: Double = 500)
        throws(AudioGraphError) {
        guard format.channelCount == 1, format.sampleType == .float32 else {
            throw .invalidParameter("a file player renders mono Float32, not \(format)")
        }
        do { reader = try AudioFileReader(path: path) } catch { throw .file(error) }
        do {
            resampler = try Resampler(inputRate: reader.format.sampleRate, outputRate: format.sampleRate, quality: 5)
        } catch {
            throw .resampler(error)
        }
        self.path = path
        fileFormat = reader.format
        fileFrameCount = reader.frameCount
        region = 0..<reader.frameCount
        ring = SPSCRing(minimumCapacity: max(format.frameCount(milliseconds: bufferMilliseconds), 4096), filledWith: 0)
        fileChunk = .allocate(capacity: Self.chunkFrames * reader.format.channelCount)
        monoChunk = .allocate(capacity: Self.chunkFrames)
        convertedChunk = .allocate(capacity: resampler.maximumOutputFrames(inputFrames: Self.chunkFrames))
        for buffer in [fileChunk, monoChunk, convertedChunk] { buffer.initialize(repeating: 0) }
        super.init(name: name ?? path.split(separator: "/").last.map(String.init) ?? path, outputFormat: format,
                   inputBusCount: 0)
    }

    deinit {
        thread?.stop()
        for buffer in [fileChunk, monoChunk, convertedChunk] { buffer.deallocate() }
    }

    /// Plays `region` of the file (file frames; nil: all of it), over and over if `loops`, from graph sample time
    /// `startSampleTime` on (0: as soon as the graph starts). Only while the graph is stopped. Not real-time safe.
    public func schedule(region: Range<Int>? = nil, loops: Bool = false, startSampleTime: Int = 0)
        throws(AudioGraphError) {
        guard thread == nil else { throw .invalidParameter("schedule \(name) while the graph is stopped") }
        let whole = 0..<fileFrameCount
        let chosen = (region ?? whole).clamped(to: whole)
        guard !chosen.isEmpty else { throw .invalidParameter("\(name): the region \(String(describing: region)) is empty") }
        self.region = chosen
        self.loops = loops
        self.startSampleTime = max(startSampleTime, 0)
        filePosition = chosen.lowerBound
        pendingCount = 0
        // Nothing renders while the graph is stopped, so this thread may drop what an earlier schedule buffered.
        ring.discard(ring.availableToRead)
        resampler.reset()
        reachedEnd.store(false, ordering: .relaxed)
        do { try reader.seek(toFrame: chosen.lowerBound) } catch { throw .file(error) }
    }

    /// Whether a non-looping region has played out.
    public var isFinished: Bool { reachedEnd.load(ordering: .acquiring) && ring.availableToRead == 0 }

    /// Slices that found the ring short while the file still had audio (the streaming thread fell behind).
    public var underrunCount: Int { underruns.load(ordering: .relaxed) }

    /// Blocks until the ring holds `milliseconds` of audio (or the region has played out), for drivers that run
    /// the graph faster than real time (a simulated room on a virtual clock). Not real-time safe.
    public func waitUntilBuffered(milliseconds: Double = 200) {
        let wanted = min(outputFormat!.frameCount(milliseconds: milliseconds), ring.capacity / 2)
        while thread != nil, ring.availableToRead < wanted, !reachedEnd.load(ordering: .acquiring) { usleep(200) }
    }

    /// The error that stopped streaming, if any.
    public var streamingError: AudioFileError? { readFailure.withLock { $0 } }

    override func didStart() throws(AudioGraphError) {
        guard thread == nil else { return }
        fill()  // the first slices find audio waiting
        let streamer = RepeatingThread(name: "voiceio-player") { [unowned self] in
            if !self.fill() { usleep(5000) }
        }
        do { try streamer.start() } catch { throw .thread(error) }
        thread = streamer
    }

    override func didStop() {
        thread?.stop()
        thread = nil
    }

    /// Converts file audio into the ring while it has room; returns whether it did anything.
    @discardableResult
    private func fill() -> Bool {
        var worked = false
        while ring.availableToWrite >= convertedChunk.count, !reachedEnd.load(ordering: .relaxed) {
            if pendingCount == 0 {
                guard readChunk() else { break }
            }
            let input = UnsafeBufferPointer(rebasing: monoChunk[pendingStart..<(pendingStart + pendingCount)])
            let (used, produced) = resampler.process(input: input, output: convertedChunk)
            pendingStart += used
            pendingCount -= used
            ring.write(UnsafeBufferPointer(rebasing: convertedChunk[..<produced]))
            worked = true
        }
        return worked
    }

    /// Reads the next chunk of the region into `monoChunk`, wrapping when looping; false at the end or on error.
    private func readChunk() -> Bool {
        if filePosition >= region.upperBound {
            guard loops else {
                reachedEnd.store(true, ordering: .releasing)
                return false
            }
            do { try reader.seek(toFrame: region.lowerBound) } catch { return fail(error) }
            filePosition = region.lowerBound
        }
        let channels = fileFormat.channelCount
        let wanted = min(Self.chunkFrames, region.upperBound - filePosition)
        let frames: Int
        do {
            frames = try reader.read(into: UnsafeMutableBufferPointer(rebasing: fileChunk[..<(wanted * channels)]))
        } catch {
            return fail(error)
        }
        guard frames > 0 else {
            // The file is shorter than its header said: treat it as the region's end.
            region = region.lowerBound..<filePosition
            return loops && !region.isEmpty ? readChunk() : fail(nil)
        }
        for frame in 0..<frames {
            var sum: Float = 0
            for channel in 0..<channels { sum += fileChunk[frame * channels + channel] }
            let sample = sum / Float(channels)
            monoChunk[frame] = sample.isFinite ? sample : 0
        }
        filePosition += frames
        pendingStart = 0
        pendingCount = frames
        return true
    }

    private func fail(_ error: AudioFileError?) -> Bool {
        if let error { readFailure.withLock { $0 = error } }
        reachedEnd.store(true, ordering: .releasing)
        return false
    }

    override func render(inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, frameCount: Int, sampleTime: Int) {
        let silentFrames = min(max(startSampleTime - sampleTime, 0), frameCount)
        output.baseAddress!.update(repeating: 0, count: silentFrames)
        let wanted = frameCount - silentFrames
        guard wanted > 0 else { return }
        let destination = UnsafeMutableBufferPointer(rebasing: output[silentFrames..<frameCount])
        let read = ring.read(into: destination)
        if read < wanted {
            destination.baseAddress!.advanced(by: read).update(repeating: 0, count: wanted - read)
            if !reachedEnd.load(ordering: .acquiring) { underruns.add(1, ordering: .relaxed) }
        }
    }
}
