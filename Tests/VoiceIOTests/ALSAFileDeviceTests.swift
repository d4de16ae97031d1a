import CAllocCounter
import Foundation
import Synchronization
import Testing
@testable import VoiceIO

/// Deterministic duplex runs through alsa-lib's `file` plugin over `null` slaves (Tests/ALSA/voiceio-test.conf):
/// capture reads a counting pattern from a raw file, playback writes the cycle's output to another.
@Suite(.serialized) struct ALSAFileDeviceTests {
    /// Counting pattern: frame i holds (i mod 65536) − 32768 as Int16, i.e. that over 32768 as Float.
    static func patternValue(_ frame: Int) -> Int16 { Int16(truncatingIfNeeded: frame % 65536 - 32768) }
    static func patternFloat(_ frame: Int) -> Float { Float(patternValue(frame)) / 32768 }

    static func rawFrames(count: Int, format: StreamFormat) -> Data {
        var data = Data(capacity: format.byteCount(frameCount: count))
        for frame in 0..<count {
            for _ in 0..<format.channelCount {
                switch format.sampleType {
                case .int16: withUnsafeBytes(of: patternValue(frame).littleEndian) { data.append(contentsOf: $0) }
                case .float32: withUnsafeBytes(of: patternFloat(frame).bitPattern.littleEndian) { data.append(contentsOf: $0) }
                }
            }
        }
        return data
    }

    /// The first channel of every frame of a raw file in `format`, as Float (Int16 over 32768).
    static func firstChannel(of data: Data, format: StreamFormat) -> [Float] {
        let frameCount = data.count / format.bytesPerFrame
        return data.withUnsafeBytes { bytes in
            (0..<frameCount).map { frame in
                let offset = frame * format.bytesPerFrame
                switch format.sampleType {
                case .int16: return Float(Int16(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int16.self))) / 32768
                case .float32: return Float(bitPattern: UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                }
            }
        }
    }

    static let formats: [(SampleType, Int)] = [(.int16, 2), (.float32, 1), (.int16, 1), (.float32, 2)]

    @Test(arguments: formats)
    func framesReachTheCycleAndTheFileInOrder(sampleType: SampleType, channelCount: Int) throws {
        let directory = try ALSATestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let format = try StreamFormat(sampleRate: 48000, channelCount: channelCount, sampleType: sampleType)
        let inputFrameCount = 9600
        let inputURL = directory.appendingPathComponent("in.raw")
        let outputURL = directory.appendingPathComponent("out.raw")
        try Self.rawFrames(count: inputFrameCount, format: format).write(to: inputURL)

        let requested = DeviceConfiguration.request(sampleRate: 48000)
        let extraFrames = requested.periodFrames * 4
        let captured = FrameRecorder(capacity: inputFrameCount + extraFrames)
        let played = FrameRecorder(capacity: inputFrameCount)
        let options = ALSADevice.Options(sampleTypes: [sampleType], channelCounts: [channelCount], realTimePriority: nil)
        var given: DeviceConfiguration?
        var settings: (capture: ALSAStreamSettings?, playback: ALSAStreamSettings?)
        do {
            let device = ALSADevice(playbackName: "voiceio_file_playback:OUT=\"\(outputURL.path)\"",
                                    captureName: "voiceio_file_capture:IN=\"\(inputURL.path)\"",
                                    config: try ALSATestSupport.config(), options: options)
            given = try device.open(requested: requested)
            settings = (device.captureSettings, device.playbackSettings)
            var frameIndex = 0
            try device.start { capture, playback in
                captured.append(capture)
                for index in playback.indices {
                    playback[index] = Self.patternFloat(frameIndex)
                    frameIndex += 1
                }
                played.append(UnsafeBufferPointer(playback))
            }
            let finished = ALSATestSupport.wait(upToSeconds: 10) { captured.isFull && played.isFull }
            device.stop()
            #expect(finished, "the file device stalled")
            #expect(device.timing.xrunCount == 0)
        }

        #expect(given == requested)
        #expect(settings.capture?.format == format)
        #expect(settings.playback?.format == format)
        #expect(settings.capture?.periodFrames == requested.periodFrames)
        // The playback buffer has room for the queue to grow after underruns; the device starts at the request.
        #expect(settings.playback?.bufferFrames == requested.bufferFrames + options.playbackGrowthPeriods * requested.periodFrames)

        let capturedFrames = captured.frames
        let firstCaptureMismatch = (0..<inputFrameCount).first { capturedFrames[$0] != Self.patternFloat($0) }
        #expect(firstCaptureMismatch == nil, "capture frame \(firstCaptureMismatch ?? -1) out of order")
        #expect(capturedFrames[inputFrameCount...].allSatisfy { $0 == 0 }, "frames past the input file are not silence")

        let written = Self.firstChannel(of: try Data(contentsOf: outputURL), format: format)
        let prefill = written.firstIndex { $0 != 0 } ?? written.count
        #expect(prefill > 0 && prefill <= requested.bufferFrames && prefill % requested.periodFrames == 0,
                "playback should start with whole periods of silence, found \(prefill) frames")
        #expect(written.count >= prefill + inputFrameCount)
        let firstPlaybackMismatch = (0..<min(inputFrameCount, written.count - prefill)).first {
            written[prefill + $0] != Self.patternFloat($0)
        }
        #expect(firstPlaybackMismatch == nil, "playback frame \(firstPlaybackMismatch ?? -1) out of order")
    }

    /// The I/O thread allocates nothing once running: counted on that thread from one cycle to a later one,
    /// which covers reads, conversions, writes and delay measurements in between.
    @Test func theIOLoopAllocatesNothing() throws {
        let directory = try ALSATestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let format = try StreamFormat(sampleRate: 48000, channelCount: 2, sampleType: .int16)
        let inputURL = directory.appendingPathComponent("in.raw")
        try Self.rawFrames(count: 48000, format: format).write(to: inputURL)
        let countedCycles = 200
        /// Allocations on the I/O thread of a new device from its first cycle to `countedCycles` later (nil when
        /// it did not run that long).
        func countAllocations() throws -> Int? {
            let device = ALSADevice(playbackName: "voiceio_file_playback:OUT=\"\(directory.path)/out.raw\"",
                                    captureName: "voiceio_file_capture:IN=\"\(inputURL.path)\"",
                                    config: try ALSATestSupport.config(),
                                    options: ALSADevice.Options(realTimePriority: nil))
            _ = try device.open(requested: .request(sampleRate: 48000))
            let allocations = Atomic<Int>(-1)
            var cycle = 0
            try device.start { _, playback in
                cycle += 1
                if cycle == 1 { alloc_counter_start() }
                if cycle == 1 + countedCycles { allocations.store(Int(alloc_counter_stop()), ordering: .releasing) }
                playback.update(repeating: 0.25)
            }
            let counted = ALSATestSupport.wait(upToSeconds: 10) { allocations.load(ordering: .acquiring) >= 0 }
            device.stop()
            return counted ? allocations.load(ordering: .acquiring) : nil
        }
        // An unoptimised build instantiates generic metadata the first time a path runs (once per process, so
        // whether it lands in the count depends on which test ran first): a warm-up device runs the loop first.
        try #require(try countAllocations() != nil)
        let allocations = try countAllocations()
        try #require(allocations != nil)
        #expect(allocations == 0)
    }
}
