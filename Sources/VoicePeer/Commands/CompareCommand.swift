import ArgumentParser
import Foundation
import VoiceCall
import VoiceIO

/// `voicepeer compare`: how well and how late one recording follows another (interop checks, latency bench).
struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compare",
        abstract: "Print the lag and correlation of TEST against REFERENCE (test converted to the reference's rate).",
        discussion: """
            With --reference-start and --test-start (when each file's frame 0 happened on one clock, such as the \
            times voicepeer call prints for its microphone and loudspeaker recordings), also prints delay_ms: \
            how much later the matched sound is in TEST than in REFERENCE on that clock.
            """)

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
    @Option(name: .customLong("window-s"),
            help: "Also print windowed_correlation: the median over windows this long of each one's best correlation within 100 ms of the overall lag.")
    var windowSeconds: Double?
    @Option(name: .customLong("reference-start"),
            help: "When the reference's frame 0 happened, in seconds of one clock (e.g. from voicepeer call's summary).")
    var referenceStartSeconds: Double?
    @Option(name: .customLong("test-start"), help: "When the test's frame 0 happened, on the same clock.")
    var testStartSeconds: Double?

    func validate() throws {
        try FlagRange(flag: "--max-lag-ms", range: 0...60_000).check(maxLagMilliseconds)
        try FlagRange(flag: "--skip-s", range: 0...86_400).check(skipSeconds)
        try FlagRange(flag: "--length-s", range: 0...86_400, isLowerBoundExcluded: true).check(lengthSeconds)
        try FlagRange(flag: "--window-s", range: 0.05...60).check(windowSeconds)
        try FlagRange(flag: "--reference-start", range: -1e12...1e12).check(referenceStartSeconds)
        try FlagRange(flag: "--test-start", range: -1e12...1e12).check(testStartSeconds)
        guard (referenceStartSeconds == nil) == (testStartSeconds == nil) else {
            throw ValidationError("--reference-start and --test-start go together")
        }
    }

    func run() throws {
        try CommandFailure.reporting {
            let reader = try AudioFileReader(path: reference)
            let rate = reader.format.sampleRate
            let original = try reader.readAllMono()
            let received = try AudioFileReader.monoSamples(path: test, sampleRate: rate)
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
            var line = String(format: "lag_ms=%.1f correlation=%.3f test_rms_dbfs=%.1f", lagMilliseconds, result.correlation, level)
            if let windowSeconds {
                let windowed = window.withUnsafeBufferPointer { reference in
                    received.withUnsafeBufferPointer { test in
                        SignalAlignment.windowedMedianCorrelation(
                            reference: reference, test: test, overall: result,
                            windowFrames: Int(windowSeconds * Double(rate)), windowLagRange: rate / 10)
                    }
                }
                line += windowed.map { String(format: " windowed_correlation=%.3f", $0) } ?? " windowed_correlation=none"
            }
            if let referenceStartSeconds, let testStartSeconds {
                // The same sound is at reference frame i and test frame i + lag: its delay on the common clock.
                let delayMilliseconds = lagMilliseconds + (testStartSeconds - referenceStartSeconds) * 1000
                line += String(format: " delay_ms=%.1f", delayMilliseconds)
            }
            print(line)
        }
    }
}
