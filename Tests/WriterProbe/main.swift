// A helper for AudioFileTests: writes a 16-bit mono WAV with AudioFileWriter until it is killed, so the test can
// check what a SIGKILL leaves behind. Usage: WriterProbe PATH
//
// Sample n of the file is Int16(truncatingIfNeeded: n). It writes 10 ms blocks at ten times real time and prints
// the frames written so far after every second of audio. It stops by itself after 60 s of audio.
import Foundation
import VoiceIO

let sampleRate = 16000
let blockFrames = 160
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: WriterProbe PATH\n".utf8))
    exit(2)
}
do {
    let writer = try AudioFileWriter(path: CommandLine.arguments[1],
                                     format: try StreamFormat(sampleRate: sampleRate, sampleType: .int16))
    var block = [Int16](repeating: 0, count: blockFrames)
    while writer.framesWritten < 60 * sampleRate {
        for index in block.indices { block[index] = Int16(truncatingIfNeeded: writer.framesWritten + index) }
        try block.withUnsafeBufferPointer { try writer.write($0) }
        if writer.framesWritten % sampleRate == 0 {
            FileHandle.standardOutput.write(Data("\(writer.framesWritten)\n".utf8))
        }
        usleep(1000)
    }
} catch {
    FileHandle.standardError.write(Data("WriterProbe: \(error)\n".utf8))
    exit(1)
}
