import CAllocCounter
import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

/// A device that pulls 10 ms every 10 ms from a jitter buffer fed by a `JitterStream`, except during `pauses`
/// (milliseconds when it does not pull: a device that starts late or is suspended). Records what it played,
/// at its place on the timeline (silence where it did not pull), and the buffer's delay and target after each
/// pull.
struct PullTimeline {
    static let pullFrameCount = JitterStream.sampleRate / 100
    var output: [Float] = []
    var delays: [(milliseconds: Int, delay: Double, target: Double)] = []

    init(_ stream: JitterStream, _ buffer: JitterBuffer, _ arrivals: [JitterStream.Arrival], milliseconds: Int,
         pauses: [Range<Int>] = [], measure: (() -> Void) -> Void = { $0() }) {
        let ordered = arrivals.sorted { $0.milliseconds < $1.milliseconds }
        var next = 0
        var pcm = [Float](repeating: 0, count: Self.pullFrameCount)
        for now in stride(from: 0, to: milliseconds, by: 10) {
            while next < ordered.count, ordered[next].milliseconds <= Double(now) {
                let arrival = ordered[next]
                stream.packets[arrival.index].withUnsafeBytes { payload in
                    let packet = RTPPacket(header: arrival.header, payload: payload)
                    measure { buffer.push(packet, arrivalTicks: Int64(arrival.milliseconds * 48)) }
                }
                next += 1
            }
            guard !pauses.contains(where: { $0.contains(now) }) else {
                output += [Float](repeating: 0, count: Self.pullFrameCount)
                continue
            }
            pcm.withUnsafeMutableBufferPointer { pcm in measure { buffer.pull(into: pcm, nowTicks: Int64(now) * 48) } }
            output += pcm
            let stats = buffer.statistics
            delays.append((now, stats.delayMilliseconds, stats.targetDelayMilliseconds))
        }
    }

    /// The largest delay above the target after a pull within `range` (milliseconds).
    func maxExcess(in range: Range<Int>) -> Double {
        delays.filter { range.contains($0.milliseconds) }.map { $0.delay - $0.target }.max() ?? .infinity
    }

    /// How late the output in `range` (ms) plays `reference` (both at 16 kHz from time 0): the lag in ms
    /// (0–`maxLagMilliseconds`) of best correlation, and that correlation.
    func lag(of reference: [Float], in range: Range<Int>, maxLagMilliseconds: Int = 400) -> (milliseconds: Double, correlation: Double) {
        let perMillisecond = JitterStream.sampleRate / 1000
        let start = range.lowerBound * perMillisecond, end = range.upperBound * perMillisecond
        var best = (milliseconds: 0.0, correlation: -1.0)
        for lag in stride(from: 0, through: min(maxLagMilliseconds * perMillisecond, start), by: 2) {
            let played = Array(output[start..<end])
            let original = Array(reference[(start - lag)..<(end - lag)])
            let value = TestSignals.correlation(original, played, lag: 0)
            if value > best.correlation { best = (Double(lag) / Double(perMillisecond), value) }
        }
        return best
    }
}

@Suite struct LatencyControlTests {
    static let rate = JitterStream.sampleRate

    /// Voice, with silence (−70 dBFS noise) over `silentMilliseconds`.
    static func voice(milliseconds: Int, silentMilliseconds: Range<Int>? = nil) -> [Float] {
        var signal = TestSignals.voice(sampleRate: rate, frameCount: milliseconds * rate / 1000)
        if let silent = silentMilliseconds {
            var random = SplitMix64(seed: 3)
            for index in (silent.lowerBound * rate / 1000)..<(silent.upperBound * rate / 1000) {
                signal[index] = Float.random(in: -0.0005...0.0005, using: &random)
            }
        }
        return signal
    }

    /// A device that starts a second late, or stops pulling for a second mid-call, while packets keep coming:
    /// once it pulls again, the delay is back near the target at once (well within a second) and the voice it
    /// plays is the latest, not a second old. (Before latency control: ~1 s held, trimmed 20 ms every 0.5 s.)
    @Test(arguments: [0..<1000, 2000..<3000])
    func aSecondOfBacklogFromAPausedDeviceIsGoneWithinASecond(pause: Range<Int>) throws {
        let signal = TestSignals.voice(sampleRate: Self.rate, frameCount: 250 * JitterStream.frameCount)
        let stream = try JitterStream(packetCount: 250, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        let timeline = PullTimeline(stream, buffer, stream.arrivals(count: 250), milliseconds: 5000, pauses: [pause])
        let stats = buffer.statistics
        let resumed = pause.upperBound
        #expect(timeline.maxExcess(in: (resumed + 1000)..<4900) <= 20, "\(stats)")
        #expect(timeline.maxExcess(in: (resumed + 30)..<(resumed + 1000)) <= 20, "\(stats)")
        #expect(stats.skippedMilliseconds >= 900, "\(stats)")
        // Mouth to ear after resuming: 5 ms network + target + Opus lookahead (6.5 ms) + a pull, not a second.
        let played = timeline.lag(of: signal, in: (resumed + 500)..<(resumed + 1000), maxLagMilliseconds: 1200)
        #expect(played.correlation > 0.8 && played.milliseconds < 60, "played \(played.milliseconds) ms late (correlation \(played.correlation))")
    }

    /// 100 ms of packets held up and delivered at once (few enough that the jitter target stays at one packet):
    /// the buffer conceals meanwhile and then holds a 100 ms backlog. In silence it is dropped outright (gone
    /// within 0.3 s of its arrival); in speech it is time-compressed at most a third at a time (not gone within 0.2 s, gone
    /// within 1 s), never skipped. The voice after it plays at the target again.
    @Test(arguments: [true, false])
    func aBurstIsDroppedInSilenceAndCompressedInSpeech(silent: Bool) throws {
        let signal = Self.voice(milliseconds: 6000, silentMilliseconds: silent ? 1000..<3000 : nil)
        let stream = try JitterStream(packetCount: 300, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        // Packets 60–64 (1.2–1.3 s) all arrive at 1.305 s.
        let arrivals = stream.arrivals(count: 300) { (60..<65).contains($0) ? 1305 - Double($0) * 20 : 5 }
        let timeline = PullTimeline(stream, buffer, arrivals, milliseconds: 6000)
        let stats = buffer.statistics
        #expect(stats.skippedMilliseconds == 0, "\(stats)")
        #expect(timeline.maxExcess(in: 1300..<1320) >= 40, "no backlog to remove: \(stats)")
        if silent {
            #expect(stats.silenceDroppedMilliseconds >= 80 && stats.acceleratedMilliseconds == 0, "\(stats)")
            #expect(timeline.maxExcess(in: 1600..<6000) <= 20, "\(stats)")
        } else {
            #expect(stats.acceleratedMilliseconds >= 80 && stats.silenceDroppedMilliseconds == 0, "\(stats)")
            // A third at most: 100 ms need at least 0.3 s of speech.
            #expect(timeline.maxExcess(in: 1300..<1500) > 20, "\(stats)")
            #expect(timeline.maxExcess(in: 2300..<6000) <= 20, "\(stats)")
        }
        let after = timeline.lag(of: signal, in: 4000..<5000)
        #expect(after.correlation > 0.8 && after.milliseconds < 60, "played \(after.milliseconds) ms late (correlation \(after.correlation))")
    }

    /// Latency control allocates nothing: a paused device (skip), a burst in speech (accelerate) and in silence
    /// (drop), and packets in two groups 60 ms apart (the second overdue when the first is played: expand), each
    /// seen to happen.
    @Test func latencyControlDoesNotAllocate() throws {
        let signal = Self.voice(milliseconds: 8000, silentMilliseconds: 5000..<7000)
        let stream = try JitterStream(packetCount: 400, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        let arrivals = stream.arrivals(count: 400) { index in
            switch index {
            case 60..<65: 1305 - Double(index) * 20            // a burst in speech
            case 260..<265: 5305 - Double(index) * 20          // a burst in silence
            case 100..<106: Double(index < 103 ? 2045 : 2105) - Double(index) * 20   // two groups, 60 ms apart
            default: 5
            }
        }
        var allocations: UInt64 = 0
        var measuring = false
        _ = PullTimeline(stream, buffer, arrivals, milliseconds: 8000, pauses: [3000..<3500]) { operation in
            // The first pulls warm up Opus and the Swift runtime's caches; count from 200 ms on.
            guard measuring || buffer.statistics.received > 10 else { return operation() }
            measuring = true
            alloc_counter_start()
            operation()
            allocations += alloc_counter_stop()
        }
        let stats = buffer.statistics
        #expect(stats.skippedMilliseconds > 0 && stats.acceleratedMilliseconds > 0 && stats.silenceDroppedMilliseconds > 0
                && stats.expandedMilliseconds > 0, "\(stats)")
        #expect(allocations == 0)
    }
}

/// The time stretcher on a voiced signal: what it removes or adds is whole pitch periods, and the pitch of what
/// it leaves is the original's.
@Suite struct TimeStretcherTests {
    static let rate = 16000

    /// The period (in frames, 40–240) at which `frames` repeats, by normalized autocorrelation: measured
    /// independently of the stretcher's own search.
    static func period(_ frames: ArraySlice<Float>) -> Int {
        let samples = Array(frames)
        let values = (39...241).map { lag in
            TestSignals.correlation(Array(samples[0..<(samples.count - lag)]), Array(samples[lag...]), lag: 0)
        }
        let highest = values.max() ?? 0
        // The shortest lag that peaks near the highest: a multiple of the period matches about as well.
        for index in 1..<(values.count - 1) where values[index] >= 0.95 * highest
            && values[index] >= values[index - 1] && values[index] >= values[index + 1] {
            return index + 39
        }
        return 0
    }

    /// A steady vowel at `hertz` (five harmonics).
    static func vowel(hertz: Double, frameCount: Int) -> [Float] {
        (0..<frameCount).map { index in
            let phase = 2 * Double.pi * hertz * Double(index) / Double(rate)
            var value = 0.0
            for harmonic in 1...5 { value += sin(Double(harmonic) * phase) / Double(harmonic) }
            return Float(0.3 * value)
        }
    }

    @Test(arguments: [125.0, 200.0, 320.0])
    func accelerateRemovesWholePeriodsAndKeepsPitch(hertz: Double) {
        let original = Self.vowel(hertz: hertz, frameCount: 960)
        var frames = original
        let stretcher = TimeStretcher(sampleRate: Self.rate)
        let count = frames.withUnsafeMutableBufferPointer { stretcher.accelerate($0, count: 960, maxRemovedFrameCount: 320) }
        let removed = 960 - count
        let periodFrames = Double(Self.rate) / hertz
        #expect(removed >= 160 && removed <= 320, "removed \(removed)")
        let periods = Double(removed) / periodFrames
        #expect(abs(periods - periods.rounded()) < 0.05, "removed \(removed) frames: \(periods) periods of \(periodFrames)")
        #expect(abs(Double(Self.period(frames[..<count])) - periodFrames) <= 1.5)
        // After the splices the waveform is the original's, `removed` frames later.
        let tail = TestSignals.correlation(Array(original[(count - 160 + removed)..<(960)]), Array(frames[(count - 160)..<count]), lag: 0)
        #expect(tail > 0.99, "tail correlation \(tail)")
    }

    /// Speech-like voice with a gliding pitch (200–240 Hz): compressed by up to a third, its pitch over the
    /// stretch stays the original's (within 3 %).
    @Test func compressedSpeechKeepsItsPitch() {
        let original = TestSignals.voice(sampleRate: Self.rate, frameCount: 16000)
        var compressed: [Float] = []
        var removedTotal = 0
        let stretcher = TimeStretcher(sampleRate: Self.rate)
        for start in stride(from: 0, to: 16000, by: 640) {
            var block = Array(original[start..<(start + 640)])
            let count = block.withUnsafeMutableBufferPointer { stretcher.accelerate($0, count: 640, maxRemovedFrameCount: 213) }
            removedTotal += 640 - count
            compressed += block[..<count]
        }
        #expect(removedTotal >= 16000 / 5, "removed only \(removedTotal) frames")
        for window in stride(from: 0, to: compressed.count - 960, by: 960) {
            let sourceWindow = window * 16000 / compressed.count
            let before = Double(Self.period(original[sourceWindow..<(sourceWindow + 960)]))
            let after = Double(Self.period(compressed[window..<(window + 960)]))
            #expect(abs(after - before) / before < 0.03, "period \(before) -> \(after) at \(window)")
        }
    }

    @Test func expandRepeatsTheLastPeriod() {
        let original = Self.vowel(hertz: 200, frameCount: 1400)
        var frames = original
        let stretcher = TimeStretcher(sampleRate: Self.rate)
        let count = frames.withUnsafeMutableBufferPointer { stretcher.expand($0, count: 320, maxAddedFrameCount: 160) }
        #expect(count - 320 == 80 || count - 320 == 160, "added \(count - 320)")
        // A steady vowel goes on as it would have: the stretched frames match the original continued.
        let continued = TestSignals.correlation(Array(original[0..<count]), Array(frames[0..<count]), lag: 0)
        #expect(continued > 0.99, "correlation with the vowel continued \(continued)")
        #expect(Self.period(frames[..<count]) == 80)
    }
}
