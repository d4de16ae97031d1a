import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct AudioFileTests {
    /// A fresh folder for one test's files.
    final class Scratch {
        let folder: URL

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("voiceio-files-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: folder) }

        func path(_ name: String) -> String { folder.appendingPathComponent(name).path }
    }

    static func write(_ samples: [Float], to path: String, format: StreamFormat) throws {
        let writer = try AudioFileWriter(path: path, format: format)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        #expect(writer.framesWritten == samples.count / format.channelCount)
        writer.close()
        writer.close()
    }

    static func readAll<Sample: Numeric>(_ path: String, as _: Sample.Type,
                                         read: (AudioFileReader, UnsafeMutableBufferPointer<Sample>) throws -> Int) throws -> [Sample] {
        let reader = try AudioFileReader(path: path)
        var samples = [Sample](repeating: 0, count: reader.frameCount * reader.format.channelCount + 7)
        let frames = try samples.withUnsafeMutableBufferPointer { try read(reader, $0) }
        #expect(frames == reader.frameCount)
        var pastTheEnd = [Sample](repeating: 0, count: 16)
        #expect(try pastTheEnd.withUnsafeMutableBufferPointer { try read(reader, $0) } == 0)
        return Array(samples[0..<(frames * reader.format.channelCount)])
    }

    @Test func float32RoundTripIsExact() throws {
        let scratch = try Scratch()
        let path = scratch.path("float.wav")
        let sine = SyntheticAudio.sine(frequency: 440, sampleRate: 44100, frameCount: 4410, amplitude: 0.9) + [1.5, -2]
        try Self.write(sine, to: path, format: try StreamFormat(sampleRate: 44100, sampleType: .float32))
        let reader = try AudioFileReader(path: path)
        #expect(reader.format == (try StreamFormat(sampleRate: 44100, sampleType: .float32)))
        #expect(try Self.readAll(path, as: Float.self) { try $0.read(into: $1) } == sine)
        let asInt16 = try Self.readAll(path, as: Int16.self) { try $0.read(into: $1) }
        #expect(zip(asInt16, sine).allSatisfy { abs(Float($0) / 32767 - max(-1, min(1, $1))) <= 1 / 32767 })
    }

    @Test("a writer gathering pieces puts whole pieces in the file, the rest on close")
    func piecesReachTheFileWhole() throws {
        let scratch = try Scratch()
        let path = scratch.path("pieces.wav")
        let format = try StreamFormat(sampleRate: 16000, channelCount: 2, sampleType: .float32)
        let samples = (0..<3400).map { Float($0 % 200) / 200 - 0.5 }
        let writer = try AudioFileWriter(path: path, format: format, pieceFrames: 800)
        func write(_ range: Range<Int>) throws { try samples[range].withUnsafeBufferPointer { try writer.write($0) } }
        func framesInFile() throws -> Int { try AudioFileReader(path: path).frameCount }
        try write(0..<1000)  // 500 frames: gathering
        #expect(writer.framesWritten == 0)
        #expect(try framesInFile() == 0)
        try write(1000..<3000)  // 1500 frames in all: one piece of 800 written, 700 gathering
        #expect(writer.framesWritten == 800)
        #expect(try framesInFile() == 800)
        try write(3000..<3400)  // 1700: two pieces
        #expect(try framesInFile() == 1600)
        writer.close()
        #expect(writer.framesWritten == 1700)
        #expect(try Self.readAll(path, as: Float.self) { try $0.read(into: $1) } == samples)
    }

    @Test func int16RoundTripIsExact() throws {
        let scratch = try Scratch()
        let path = scratch.path("pcm16.wav")
        let samples: [Int16] = [0, 1, -1, 12345, -12345, .max, .min] + (0..<1000).map { Int16(truncatingIfNeeded: $0 * 97) }
        let writer = try AudioFileWriter(path: path, format: try StreamFormat(sampleRate: 16000, sampleType: .int16))
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        writer.close()
        #expect(try Self.readAll(path, as: Int16.self) { try $0.read(into: $1) } == samples)
        let asFloat = try Self.readAll(path, as: Float.self) { try $0.read(into: $1) }
        #expect(asFloat == samples.map { Float($0) / 32768 })
    }

    @Test func floatIntoInt16FileClipsInsteadOfWrapping() throws {
        let scratch = try Scratch()
        let path = scratch.path("clipped.wav")
        try Self.write([1.5, -1.5, 0.5, -0.25, 1.0], to: path, format: try StreamFormat(sampleRate: 8000, sampleType: .int16))
        let read = try Self.readAll(path, as: Int16.self) { try $0.read(into: $1) }
        let expected: [Int16] = [32767, -32768, 16384, -8192, 32767]
        #expect(zip(read, expected).allSatisfy { abs(Int($0) - Int($1)) <= 1 })
    }

    @Test func stereoReadsInterleavedAndAveragesToMono() throws {
        let scratch = try Scratch()
        let path = scratch.path("stereo.wav")
        let left = SyntheticAudio.sine(frequency: 300, sampleRate: 48000, frameCount: 9000, amplitude: 0.5)
        let interleaved = left.flatMap { [$0, Float(0.25)] }
        try Self.write(interleaved, to: path, format: try StreamFormat(sampleRate: 48000, channelCount: 2))
        let reader = try AudioFileReader(path: path)
        #expect(reader.format.channelCount == 2 && reader.frameCount == 9000)
        let mono = try reader.readAllMono()
        #expect(mono == left.map { ($0 + 0.25) / 2 })
    }

    @Test func aFileCutShortReadsTheFramesItHolds() throws {
        let scratch = try Scratch()
        let path = scratch.path("cut.wav")
        try Self.write([Float](repeating: 0.5, count: 1000), to: path, format: try StreamFormat(sampleRate: 16000, sampleType: .int16))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(44 + 2 * 300).write(to: URL(fileURLWithPath: path))
        let mono = try AudioFileReader(path: path).readAllMono()
        #expect(mono.count == 300)
        #expect(mono.allSatisfy { abs($0 - 0.5) < 1e-4 })
    }

    @Test func badInputGetsATypedErrorNamingThePath() throws {
        let scratch = try Scratch()
        let missing = scratch.path("missing.wav")
        #expect { try AudioFileReader(path: missing) } throws: { error in
            guard case .cannotOpen(missing, let reason) = error as? AudioFileError else { return false }
            return reason.contains("No such file") && "\(error)".contains(missing)
        }
        let text = scratch.path("notes.wav")
        try Data("these are not samples\n".utf8).write(to: URL(fileURLWithPath: text))
        #expect(throws: AudioFileError.notAudio(path: text)) { try AudioFileReader(path: text) }
        let wav = scratch.path("whole.wav")
        try Self.write([0.1, 0.2], to: wav, format: try StreamFormat(sampleRate: 16000, sampleType: .int16))
        let truncated = scratch.path("truncated.wav")
        try Data(contentsOf: URL(fileURLWithPath: wav)).prefix(20).write(to: URL(fileURLWithPath: truncated))
        #expect { try AudioFileReader(path: truncated) } throws: { error in
            guard case .malformed(truncated, _) = error as? AudioFileError else { return false }
            return "\(error)".hasPrefix("\(truncated) is a truncated or damaged audio file: ")
        }
        var slowBytes = try Data(contentsOf: URL(fileURLWithPath: wav))
        slowBytes.replaceSubrange(24..<28, with: [0xF4, 0x01, 0, 0])  // 500 Hz, below StreamFormat's range
        let slow = scratch.path("slow.wav")
        try slowBytes.write(to: URL(fileURLWithPath: slow))
        #expect { try AudioFileReader(path: slow) } throws: { error in
            guard case .unsupportedFormat(slow, let reason) = error as? AudioFileError else { return false }
            return reason.contains("500 Hz")
        }
        let noFolder = scratch.path("no/such/folder/out.wav")
        #expect { try AudioFileWriter(path: noFolder, format: try StreamFormat(sampleRate: 16000)) } throws: { error in
            guard case .cannotOpen(noFolder, _) = error as? AudioFileError else { return false }
            return true
        }
        let planar = try StreamFormat(sampleRate: 16000, channelCount: 2, isInterleaved: false)
        #expect { try AudioFileWriter(path: scratch.path("planar.wav"), format: planar) } throws: { error in
            guard case .unsupportedFormat = error as? AudioFileError else { return false }
            return true
        }
        let closed = try AudioFileWriter(path: scratch.path("closed.wav"), format: try StreamFormat(sampleRate: 16000))
        closed.close()
        #expect(throws: AudioFileError.self) { try [Float(0)].withUnsafeBufferPointer { try closed.write($0) } }
    }

    /// The RIFF size and the `data` chunk size a WAV header declares, read from the bytes themselves: libsndfile
    /// forgives a header declaring no data (it trusts the file length), most players do not.
    static func declaredSizes(ofWAV bytes: Data) -> (riffByteCount: Int, dataByteCount: Int)? {
        func uint32(at offset: Int) -> Int? {
            guard offset >= 0, offset + 4 <= bytes.count else { return nil }
            return (0..<4).reduce(0) { $0 | Int(bytes[bytes.startIndex + offset + $1]) << (8 * $1) }
        }
        guard bytes.starts(with: Data("RIFF".utf8)), let riffByteCount = uint32(at: 4) else { return nil }
        var offset = 12
        while let chunkByteCount = uint32(at: offset + 4) {
            if bytes[(bytes.startIndex + offset)..<(bytes.startIndex + offset + 4)] == Data("data".utf8) {
                return (riffByteCount, chunkByteCount)
            }
            offset += 8 + chunkByteCount + chunkByteCount % 2
        }
        return nil
    }

    /// Runs WriterProbe (an executable built next to this test bundle), kills it with SIGKILL once it reports two
    /// seconds written, and checks what it left: a header declaring at least everything reported minus one second,
    /// and those samples, sample for sample.
    @Test func aWriterKilledMidStreamLeavesAPlayableFile() throws {
        let scratch = try Scratch()
        let path = scratch.path("killed.wav")
        let buildFolder = URL(fileURLWithPath: try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            .deletingLastPathComponent()
        let probe = buildFolder.appendingPathComponent("WriterProbe")
        try #require(FileManager.default.isExecutableFile(atPath: probe.path), "build WriterProbe first (swift build)")
        let process = Process()
        process.executableURL = probe
        process.arguments = [path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var reportedFrames = 0
        var text = ""
        while reportedFrames < 32000 {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            reportedFrames = text.split(separator: "\n").compactMap { Int($0) }.max() ?? 0
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
        try #require(reportedFrames >= 32000, "WriterProbe stopped early: \(text)")

        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let declared = try #require(Self.declaredSizes(ofWAV: bytes))
        #expect(declared.dataByteCount / 2 >= reportedFrames - 16000)
        #expect(declared.riffByteCount + 8 <= bytes.count && declared.riffByteCount >= declared.dataByteCount)
        let samples = try Self.readAll(path, as: Int16.self) { try $0.read(into: $1) }
        #expect(samples.count >= reportedFrames - 16000)
        #expect(samples.enumerated().allSatisfy { $0.element == Int16(truncatingIfNeeded: $0.offset) })
    }
}
