#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import VoiceIO

/// Records a mono stream produced on the real-time thread: `append` copies frames into an SPSC ring, and a
/// writer thread of its own drains the ring into a WAV file (16-bit) every `flushIntervalMilliseconds`.
/// `AudioFileWriter` rewrites the header on each write, so a peer killed mid-call leaves a playable file.
///
/// With a timeline (`timelinePath`), every `append` also notes when it ran (CLOCK_MONOTONIC) against the file's
/// frame count then, and the writer thread writes those points to a text file, one "FRAME NANOSECONDS" line per
/// append: a device that stalls, runs late or runs at its own rate shifts its recording against the clock, and
/// the timeline says by how much (`RecordingTimeline`).
///
/// `append` is real-time safe (frames that do not fit are dropped and counted); `init` and `close` are not.
public final class StreamRecorder: @unchecked Sendable {
    public let path: String
    public let sampleRate: Int
    /// Where the timeline goes (nil: none kept).
    public let timelinePath: String?
    private let ring: SPSCRing<Float>
    private let timeline: SPSCRing<RecordingTimeline.Point>?
    private let timelineFile: UnsafeMutablePointer<FILE>?
    private var appendedFrameCount: Int64 = 0
    private let writer: AudioFileWriter
    private let chunk: UnsafeMutableBufferPointer<Float>
    private let dropped = Atomic<Int>(0)
    private let firstAppend = Atomic<Int64>(0)
    private var thread: RepeatingThread?
    private let flushIntervalMicroseconds: UInt32
    private let failure = Mutex<AudioFileError?>(nil)
    private var isClosed = false

    /// Creates the file and starts the writer thread. `capacitySeconds` of audio may wait in the ring.
    /// `timelinePath`: also keep the timeline there (its points wait in a ring as long as the audio may).
    public init(path: String, sampleRate: Int, capacitySeconds: Double = 2, flushIntervalMilliseconds: Int = 50,
                timelinePath: String? = nil) throws(AudioFileError) {
        let format: StreamFormat
        do { format = try StreamFormat(sampleRate: sampleRate, sampleType: .int16) } catch {
            throw .unsupportedFormat(path: path, reason: "\(error)")
        }
        writer = try AudioFileWriter(path: path, format: format)
        self.path = path
        self.sampleRate = sampleRate
        ring = SPSCRing(minimumCapacity: Int(Double(sampleRate) * capacitySeconds), filledWith: 0)
        self.timelinePath = timelinePath
        if let timelinePath {
            guard let file = fopen(timelinePath, "w") else {
                throw .cannotOpen(path: timelinePath, reason: String(cString: strerror(errno)))
            }
            timelineFile = file
            // One point per append: at least one per millisecond of audio covers periods down to 1 ms.
            timeline = SPSCRing(minimumCapacity: Int(capacitySeconds * 1000), filledWith: RecordingTimeline.Point())
        } else {
            timelineFile = nil
            timeline = nil
        }
        chunk = .allocate(capacity: 4096)
        chunk.initialize(repeating: 0)
        flushIntervalMicroseconds = UInt32(flushIntervalMilliseconds * 1000)
        let thread = RepeatingThread(name: "call-recorder") { [unowned self] in
            drain()
            usleep(flushIntervalMicroseconds)
        }
        do { try thread.start() } catch { throw .cannotOpen(path: path, reason: "no writer thread: \(error)") }
        self.thread = thread
    }

    deinit {
        close()
        chunk.deallocate()
    }

    /// Queues frames for the file. Real-time safe; one producer thread.
    public func append(_ frames: UnsafeBufferPointer<Float>) {
        let now = MonotonicClock.nanoseconds()
        if firstAppend.load(ordering: .relaxed) == 0 { firstAppend.store(now, ordering: .relaxed) }
        if let timeline {
            var point = RecordingTimeline.Point(frame: appendedFrameCount, nanoseconds: now)
            _ = withUnsafePointer(to: &point) { timeline.write(UnsafeBufferPointer(start: $0, count: 1)) }
        }
        let written = ring.write(frames)
        appendedFrameCount += Int64(written)
        if written < frames.count { dropped.add(frames.count - written, ordering: .relaxed) }
    }

    /// When `append` first ran, on CLOCK_MONOTONIC in nanoseconds (nil before): lets recordings made by
    /// different processes on one machine be put on one time base.
    public var firstAppendNanoseconds: Int64? {
        let value = firstAppend.load(ordering: .relaxed)
        return value == 0 ? nil : value
    }

    /// Frames dropped because the writer fell behind.
    public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) }

    /// Frames in the file so far.
    public var framesWritten: Int { writer.framesWritten }

    /// The first write error, if any (the recorder stops writing after it).
    public var error: AudioFileError? { failure.withLock { $0 } }

    /// Writes what is left, stops the thread and closes the file. Call again: nothing happens.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        thread?.stop()
        drain()
        writer.close()
        if let timelineFile { fclose(timelineFile) }
    }

    private func drain() {
        if let timeline, let timelineFile, let timelinePath {
            var points = ""
            var point = RecordingTimeline.Point()
            while withUnsafeMutablePointer(to: &point, { timeline.read(into: UnsafeMutableBufferPointer(start: $0, count: 1)) }) == 1 {
                points += "\(point.frame) \(point.nanoseconds)\n"
            }
            if !points.isEmpty, fputs(points, timelineFile) < 0 || fflush(timelineFile) != 0 {
                let reason = String(cString: strerror(errno))
                failure.withLock { $0 = $0 ?? .writeFailed(path: timelinePath, reason: reason) }
            }
        }
        while failure.withLock({ $0 == nil }) {
            let count = ring.read(into: chunk)
            guard count > 0 else { return }
            do { try writer.write(UnsafeBufferPointer(rebasing: chunk[..<count])) } catch {
                failure.withLock { $0 = error }
            }
        }
    }
}
