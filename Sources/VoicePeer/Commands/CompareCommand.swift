import ArgumentParser
import Foundation
import VoiceCall
import VoiceIO

/// `voicepeer compare`: how well and how late one recording follows another (interop checks, latency bench).
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Print the lag and correlation of TEST against REFERENCE (test converted to the reference's rate).")

    @Option(help: "The original signal (WAV).")
    var reference: String
    @Option(help: "The signal that went through the call (WAV).")
    var test: String
    @Option(name: .customLong("max-lag-ms"), help: "Search lags from minus to plus this many ms.")
    var maxLagMilliseconds = 1000.0
    @Option(name: .customLong("skip-s"), help: "Ignore the first seconds of the reference.")
    var skipSeconds = 0.0
    @Option(name: .customLong("length-s"), help: "Compare at most this many seconds of the reference.")
    var lengthSeconds = 10.0

    func run() throws {
        try CommandFailure.reporting {
            let reader = try AudioFileReader(path: reference)
            let rate = reader.format.sampleRate
            let original = try reader.readAllMono()
            let received = try AudioInput.load(test, sampleRate: rate)
            let start = min(original.count, Int(skipSeconds * Double(rate)))
            let end = min(original.count, start + Int(lengthSeconds * Double(rate)))
            let maxLag = Int(maxLagMilliseconds * Double(rate) / 1000)
            let window = Array(original[start..<end])
            let result = window.withUnsafeBufferPointer { reference in
                received.withUnsafeBufferPointer { test in
                    SignalAlignment.find(reference: reference, test: test, lagRange: (start - maxLag)...(start + maxLag))
                }
            }
            let lagMilliseconds = Double(result.lagFrames - start) * 1000 / Double(rate)
            let level = received.withUnsafeBufferPointer { LevelMeter.measure($0).rmsDBFS }
            print(String(format: "lag_ms=%.1f correlation=%.3f test_rms_dbfs=%.1f", lagMilliseconds, result.correlation, level))
        }
    }
}
