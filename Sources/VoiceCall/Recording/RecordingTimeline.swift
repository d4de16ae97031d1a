#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a recording's frames happened: points "frame F of the file was appended at nanosecond T of
/// CLOCK_MONOTONIC", one per device period (`StreamRecorder`'s timeline file). Between points, and past the last,
/// frames run at the nominal rate; a device that stalled or ran late shows as a point later than the frames
/// before it account for, so the time of any frame is its own, not frame ÷ nominal rate from the start.
public struct RecordingTimeline: Sendable {
    /// One point: the file's frame count and the clock when that frame arrived.
    public struct Point: Sendable, Hashable, BitwiseCopyable {
        public var frame: Int64 = 0
        public var nanoseconds: Int64 = 0

        public init(frame: Int64 = 0, nanoseconds: Int64 = 0) {
            self.frame = frame
            self.nanoseconds = nanoseconds
        }
    }

    /// Why a timeline file could not be read. One line, naming the file (and the line).
    public struct ReadError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Points in file order, frames non-decreasing (at least one).
    public let points: [Point]
    /// Frames per second of the recording.
    public let sampleRate: Int

    /// Lines longer than this, or more lines than `maximumPointCount`, are refused (a day of 10 ms periods fits).
    static let maximumLineByteCount = 64
    static let maximumPointCount = 10_000_000

    /// `points` must not be empty and their frames must not decrease.
    public init(points: [Point], sampleRate: Int) throws(ReadError) {
        guard let first = points.first else { throw ReadError(description: "a timeline needs at least one point") }
        guard sampleRate > 0 else { throw ReadError(description: "sample rate must be positive") }
        var previous = first
        for (index, point) in points.enumerated().dropFirst() {
            guard point.frame >= previous.frame else {
                throw ReadError(description: "point \(index + 1): frame \(point.frame) before frame \(previous.frame)")
            }
            previous = point
        }
        self.points = points
        self.sampleRate = sampleRate
    }

    /// Reads a timeline file ("FRAME NANOSECONDS" lines). Not real-time safe.
    public init(path: String, sampleRate: Int) throws(ReadError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(description: "cannot read timeline \(path)")
        }
        var points: [Point] = []
        for (index, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() {
            guard line.count <= Self.maximumLineByteCount, points.count < Self.maximumPointCount else {
                throw ReadError(description: "\(path) line \(index + 1): too long, or too many lines")
            }
            let fields = line.split(separator: UInt8(ascii: " "))
            guard fields.count == 2, let frame = Int64(String(decoding: fields[0], as: UTF8.self)),
                  let nanoseconds = Int64(String(decoding: fields[1], as: UTF8.self)), frame >= 0 else {
                throw ReadError(description: "\(path) line \(index + 1): expected FRAME NANOSECONDS")
            }
            points.append(Point(frame: frame, nanoseconds: nanoseconds))
        }
        do { try self.init(points: points, sampleRate: sampleRate) } catch {
            throw ReadError(description: "\(path): \(error)")
        }
    }

    /// The frame (fractional, at `sampleRate`) that `seconds` after the first point's frame falls on: the inverse of
    /// `secondsFromStart(toFrame:)`; a time inside a stall (between a point and a later one than its frames
    /// account for) falls on the later point's frame.
    public func frame(atSecondsFromStart seconds: Double) -> Double {
        let nanoseconds = points[0].nanoseconds + Int64((seconds * 1e9).rounded())
        var low = 0
        var high = points.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if points[middle].nanoseconds <= nanoseconds { low = middle } else { high = middle - 1 }
        }
        let point = points[low]
        let frame = Double(point.frame) + Double(nanoseconds - point.nanoseconds) / 1e9 * Double(sampleRate)
        return low + 1 < points.count ? min(frame, Double(points[low + 1].frame)) : frame
    }

    /// Seconds from the first point's frame to `frame` (fractional, at `sampleRate`) on the clock: the last point
    /// at or before it, plus the frames since at the nominal rate.
    public func secondsFromStart(toFrame frame: Double) -> Double {
        // The last point whose frame is at or before `frame` (the first when none is).
        var low = 0
        var high = points.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if Double(points[middle].frame) <= frame { low = middle } else { high = middle - 1 }
        }
        let point = points[low]
        return Double(point.nanoseconds - points[0].nanoseconds) / 1e9
            + (frame - Double(point.frame)) / Double(sampleRate)
    }
}
