import Foundation
import Synchronization
import VoiceIO

/// Records a mono stream produced on the real-time thread: `append` copies frames into an SPSC ring, and a
/// writer thread of its own drains the ring into a WAV file (16-bit) every `flushIntervalMilliseconds`.
/// `AudioFileWriter` rewrites the header on each write, so a peer killed mid-call leaves a playable file.
///
/// `append` is real-time safe (frames that do not fit are dropped and counted); `init` and `close` are not.
public final class StreamRecorder: @unchecked Sendable {
    public let path: String
    public let sampleRate: Int
    private let ring: SPSCRing<Float>
    private let writer: AudioFileWriter
    private let chunk: UnsafeMutableBufferPointer<Float>
    private let dropped = Atomic<Int>(0)
    private let firstAppend = Atomic<Int64>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let flushIntervalMicroseconds: UInt32
    private let failure = Mutex<AudioFileError?>(nil)
    private var isClosed = false

    /// Creates the file and starts the writer thread. `capacitySeconds` of audio may wait in the ring.
    public init(path: String, sampleRate: Int, capacitySeconds: Double = 2, flushIntervalMilliseconds: Int = 50)
        throws(AudioFileError) {
        let format: StreamFormat
        do { format = try StreamFormat(sampleRate: sampleRate, sampleType: .int16) } catch {
            throw .unsupportedFormat(path: path, reason: "\(error)")
        }
        writer = try AudioFileWriter(path: path, format: format)
        self.path = path
        self.sampleRate = sampleRate
        ring = SPSCRing(minimumCapacity: Int(Double(sampleRate) * capacitySeconds), filledWith: 0)
        chunk = .allocate(capacity: 4096)
        chunk.initialize(repeating: 0)
        flushIntervalMicroseconds = UInt32(flushIntervalMilliseconds * 1000)
        Thread.detachNewThread { [self] in drainUntilStopped() }
    }

    deinit {
        close()
        chunk.deallocate()
    }

    /// Queues frames for the file. Real-time safe; one producer thread.
    public func append(_ frames: UnsafeBufferPointer<Float>) {
        if firstAppend.load(ordering: .relaxed) == 0 { firstAppend.store(MonotonicClock.nanoseconds(), ordering: .relaxed) }
        let written = ring.write(frames)
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
        stopping.store(true, ordering: .releasing)
        finished.wait()
        writer.close()
    }

    private func drainUntilStopped() {
        while true {
            let last = stopping.load(ordering: .acquiring)
            drain()
            if last { break }
            usleep(flushIntervalMicroseconds)
        }
        finished.signal()
    }

    private func drain() {
        while failure.withLock({ $0 == nil }) {
            let count = ring.read(into: chunk)
            guard count > 0 else { return }
            do { try writer.write(UnsafeBufferPointer(rebasing: chunk[..<count])) } catch {
                failure.withLock { $0 = error }
            }
        }
    }
}
