import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
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
    @Option(name: .customLong("reference-timeline"),
            help: "With --reference-start: when each of the reference's periods happened (voicepeer call's FILE.timeline beside a device recording), so delay_ms counts real time however the device ran.")
    var referenceTimeline: String?
    @Option(name: .customLong("test-timeline"), help: "With --test-start: the test's timeline.")
    var testTimeline: String?
    @Flag(help: "Print the result as one JSON object (keys lagMilliseconds, correlation, testRMSDBFS, delayMilliseconds).")
    var json = false

    /// The result, as `--json` prints it.
    struct Comparison: Codable {
        var lagMilliseconds: Double
        var correlation: Double
        var testRMSDBFS: Double
        var delayMilliseconds: Double?
        /// With --window-s: the median of the windows' correlations (nil when no window qualified).
        var windowedCorrelation: Double?
    }

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
        guard referenceTimeline == nil || referenceStartSeconds != nil, testTimeline == nil || testStartSeconds != nil else {
            throw ValidationError("--reference-timeline and --test-timeline need --reference-start and --test-start")
        }
    }

    func run() throws {
        try CommandFailure.reporting {
            let reader = try AudioFileReader(path: reference)
            let rate = reader.format.sampleRate
            let original = try reader.readAllMono()
            let testRate = try AudioFileReader(path: test).format.sampleRate
            let received = try AudioFileReader.monoSamples(path: test, sampleRate: rate)
            let referenceTimes = try referenceTimeline.map { path throws in try RecordingTimeline(path: path, sampleRate: rate) }
            let testTimes = try testTimeline.map { path throws in try RecordingTimeline(path: path, sampleRate: testRate) }
            let start = min(original.count, Int(skipSeconds * Double(rate)))
            let end = min(original.count, start + Int(lengthSeconds * Double(rate)))
            let maxLag = Int(maxLagMilliseconds * Double(rate) / 1000)
            let window = Array(original[start..<end])
            // Where the test is searched: around the frame played at the reference window's time when timelines
            // place both (two devices that ran late by different amounts drift apart in frames), else at the
            // same frame.
            var center = start
            if let referenceStartSeconds, let testStartSeconds, referenceTimes != nil || testTimes != nil {
                let seconds = referenceStartSeconds - testStartSeconds
                    + (referenceTimes?.secondsFromStart(toFrame: Double(start)) ?? Double(start) / Double(rate))
                let testFrame = testTimes?.frame(atSecondsFromStart: seconds) ?? seconds * Double(testRate)
                center = Int((testFrame * Double(rate) / Double(testRate)).rounded())
            }
            let result = window.withUnsafeBufferPointer { reference in
                received.withUnsafeBufferPointer { test in
                    SignalAlignment.find(reference: reference, test: test, lagRange: (center - maxLag)...(center + maxLag))
                }
            }
            let lagMilliseconds = Double(result.lagFrames - start) * 1000 / Double(rate)
            let level = received.withUnsafeBufferPointer { LevelMeter.measure($0).rmsDBFS }
            var comparison = Comparison(lagMilliseconds: lagMilliseconds, correlation: Double(result.correlation),
                                        testRMSDBFS: Double(level))
            if let windowSeconds {
                comparison.windowedCorrelation = window.withUnsafeBufferPointer { reference in
                    received.withUnsafeBufferPointer { test in
                        SignalAlignment.windowedMedianCorrelation(
                            reference: reference, test: test, overall: result,
                            windowFrames: Int(windowSeconds * Double(rate)), windowLagRange: rate / 10)
                    }
                }
            }
            if let referenceStartSeconds, let testStartSeconds {
                // The same sound is at reference frame `start` and test frame `result.lagFrames` (at the reference's
                // rate): its delay on the common clock, each frame placed by its timeline when there is one.
                let referenceSeconds = referenceTimes?.secondsFromStart(toFrame: Double(start))
                    ?? Double(start) / Double(rate)
                let testFrame = Double(result.lagFrames) * Double(testRate) / Double(rate)
                let testSeconds = testTimes?.secondsFromStart(toFrame: testFrame) ?? testFrame / Double(testRate)
                comparison.delayMilliseconds = (testStartSeconds + testSeconds - referenceStartSeconds - referenceSeconds) * 1000
            }
            if json {
                print(try ReportJSON.encode(comparison), terminator: "")
                return
            }
            var line = String(cFormat: "lag_ms=%.1f correlation=%.3f test_rms_dbfs=%.1f", lagMilliseconds, result.correlation, level)
            if windowSeconds != nil {
                line += comparison.windowedCorrelation.map { String(cFormat: " windowed_correlation=%.3f", $0) } ?? " windowed_correlation=none"
            }
            if let delay = comparison.delayMilliseconds { line += String(cFormat: " delay_ms=%.1f", delay) }
            print(line)
        }
    }
}
