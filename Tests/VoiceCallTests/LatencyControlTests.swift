import CAllocCounter
import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

/// A device that pulls 10 ms every 10 ms from a jitter buffer fed by a `JitterStream`, except during `pauses`
/// (milliseconds when it does not pull: a device that starts late or is suspended), each pull `wakeUpDelay(now)`
/// ms after its period starts (a device thread's wake-up latency; the periods themselves do not drift). Records
/// what it played, at its place on the timeline (silence where it did not pull), and the buffer's delay, target
/// and statistics after each pull.
struct PullTimeline {
    static let pullFrameCount = JitterStream.sampleRate / 100
    var output: [Float] = []
    var delays: [(milliseconds: Int, delay: Double, target: Double)] = []
    var statistics: [(milliseconds: Int, statistics: JitterBufferStatistics)] = []

    init(_ stream: JitterStream, _ buffer: JitterBuffer, _ arrivals: [JitterStream.Arrival], milliseconds: Int,
         pauses: [Range<Int>] = [], wakeUpDelay: (Int) -> Double = { _ in 0 }, measure: (() -> Void) -> Void = { $0() }) {
        let ordered = arrivals.sorted { $0.milliseconds < $1.milliseconds }
        var next = 0
        var pcm = [Float](repeating: 0, count: Self.pullFrameCount)
        for now in stride(from: 0, to: milliseconds, by: 10) {
            let pullMilliseconds = Double(now) + wakeUpDelay(now)
            while next < ordered.count, ordered[next].milliseconds <= pullMilliseconds {
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
            pcm.withUnsafeMutableBufferPointer { pcm in
                measure { buffer.pull(into: pcm, nowTicks: Int64(pullMilliseconds * 48)) }
            }
            output += pcm
            let stats = buffer.statistics
            delays.append((now, stats.delayMilliseconds, stats.targetDelayMilliseconds))
            statistics.append((now, stats))
        }
    }

    /// Audio removed plus audio added by latency control from the pull at `range.lowerBound` to the last one in
    /// `range` (milliseconds).
    func changedMilliseconds(in range: Range<Int>) -> Double {
        let within = statistics.filter { range.contains($0.milliseconds) }
        guard let first = within.first?.statistics, let last = within.last?.statistics else { return 0 }
        return last.removedMilliseconds + last.expandedMilliseconds - first.removedMilliseconds - first.expandedMilliseconds
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
        let played = Array(output[start..<end])
        for lag in stride(from: 0, through: min(maxLagMilliseconds * perMillisecond, start), by: 2) {
            let original = Array(reference[(start - lag)..<(end - lag)])
            let value = TestSignals.correlation(original, played, lag: 0)
            if value > best.correlation { best = (Double(lag) / Double(perMillisecond), value) }
        }
        return best
    }

    /// The lags (ms) at which the output plays `reference` in `early` and in `late`, and whether they are one lag:
    /// both correlate above 0.8 and lie within 10 ms of each other.
    func lags(of reference: [Float], early: Range<Int>, late: Range<Int>) -> (early: Double, late: Double, isOne: Bool) {
        let first = lag(of: reference, in: early), last = lag(of: reference, in: late)
        return (first.milliseconds, last.milliseconds,
                first.correlation > 0.8 && last.correlation > 0.8 && abs(last.milliseconds - first.milliseconds) < 10)
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

    /// Talk: voice for 1.5 s, silence (−70 dBFS noise) for 0.5 s, and again.
    static func talk(milliseconds: Int) -> [Float] {
        var signal = TestSignals.voice(sampleRate: rate, frameCount: milliseconds * rate / 1000)
        var random = SplitMix64(seed: 3)
        for index in signal.indices where (index * 1000 / rate) % 2000 >= 1500 {
            signal[index] = Float.random(in: -0.0005...0.0005, using: &random)
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

    /// A second of speech held up and delivered at once while the device keeps pulling (it conceals meanwhile):
    /// the backlog is far beyond what compression at a third removes soon (about 3 s), so it is skipped down to
    /// the target at once, cross-faded, and counted. Within a second of its arrival the delay is at the target,
    /// and what plays then is the voice of that moment, not a second old. (The burst's own transit spread raises
    /// the jitter target for a while; the excess is measured above whatever target the buffer holds.)
    @Test func aSecondOfSpeechInABurstIsGoneWithinASecond() throws {
        let signal = TestSignals.voice(sampleRate: Self.rate, frameCount: 250 * JitterStream.frameCount)
        let stream = try JitterStream(packetCount: 250, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        // Packets 50–99 (1.0–2.0 s) all arrive at 2.005 s.
        let arrivals = stream.arrivals(count: 250) { (50..<100).contains($0) ? 2005 - Double($0) * 20 : 5 }
        let timeline = PullTimeline(stream, buffer, arrivals, milliseconds: 5000)
        let stats = buffer.statistics
        #expect(timeline.maxExcess(in: 2000..<2020) >= 500, "no backlog to remove: \(stats)")
        #expect(timeline.maxExcess(in: 2200..<5000) <= 20, "\(stats)")
        #expect(stats.burstSkippedMilliseconds >= 500 && stats.skippedMilliseconds == 0, "\(stats)")
        let after = timeline.lag(of: signal, in: 3000..<4000, maxLagMilliseconds: 1200)
        #expect(after.correlation > 0.8 && after.milliseconds <= stats.targetDelayMilliseconds + 60,
                "played \(after.milliseconds) ms late (correlation \(after.correlation)): \(stats)")
    }

    /// A clean, regular stream of talk (1.5 s of voice, 0.5 s of pause): packets every 20 ms, 7 ms after the
    /// device's periods start, with 0.4 ms of network jitter, one in 60 held up 4 ms more by the sender's own
    /// scheduling (beyond the 95th percentile the target follows); a device pulling 10 ms per period, its
    /// thread woken up to 1 ms late. A held-up packet finds the buffer dry once and is waited for (expand); the
    /// delay gained is what the next one needs, so it stays: after the start, latency control removes and adds
    /// less than 10 ms over 14 s, and the voice plays at one lag throughout. (Before: the gain was removed again in
    /// the next pause as a surplus and the next held-up packet expanded for, 40 ms removed and added in 12 s.)
    @Test func aCleanStreamKeepsItsDelay() throws {
        let packetCount = 700
        let signal = Self.talk(milliseconds: packetCount * 20)
        let stream = try JitterStream(packetCount: packetCount, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        var random = SplitMix64(seed: 11)
        let arrivals = stream.arrivals(count: packetCount) { _ in
            7 + Double.random(in: 0...0.4, using: &random) + (Int.random(in: 0..<60, using: &random) == 0 ? 4 : 0)
        }
        let timeline = PullTimeline(stream, buffer, arrivals, milliseconds: 14000,
                                    wakeUpDelay: { _ in Double.random(in: 0...1, using: &random) })
        let stats = buffer.statistics
        let changed = timeline.changedMilliseconds(in: 2000..<14000)
        let lags = timeline.lags(of: signal, early: 2500..<3500, late: 12500..<13500)
        #expect(changed < 10, "\(stats)")
        #expect(lags.isOne, "lag \(lags.early) ms -> \(lags.late) ms: \(stats)")
    }

    /// A sender that always sends in bursts, as ffmpeg's RTP muxer does: five 20 ms packets at once every 100 ms.
    /// Its bursts are its jitter: every packet's transit counts, the target covers the 80 ms the first of a burst
    /// waits for the last, and the voice plays at one lag with little removed or added. (When every packet but a
    /// burst's first was left out as queued behind it, the target sat at 22 ms: the buffer ran dry before each
    /// burst and removed the surplus after it, 2.8 s changed in 8 s, and `voicepeer call` took 0.58-0.79
    /// correlation from ffmpeg in scripts/interop.)
    @Test func aSenderThatAlwaysSendsInBurstsIsMeasuredWhole() throws {
        let packetCount = 500
        let signal = Self.talk(milliseconds: packetCount * 20)
        let stream = try JitterStream(packetCount: packetCount, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        let arrivals = stream.arrivals(count: packetCount) { index in
            Double((index / 5 + 1) * 100 - index * 20) + 0.01 * Double(index % 5)
        }
        let timeline = PullTimeline(stream, buffer, arrivals, milliseconds: 10000)
        let stats = buffer.statistics
        #expect(stats.targetDelayMilliseconds >= 80, "\(stats)")
        #expect(timeline.changedMilliseconds(in: 2000..<10000) < 30, "\(stats)")
        let lags = timeline.lags(of: signal, early: 2500..<3500, late: 8500..<9500)
        #expect(lags.isOne, "lag \(lags.early) ms -> \(lags.late) ms: \(stats)")
    }

    /// A device chain that tops each 10 ms period up with a tiny second pull (conversion rounding: 159 frames,
    /// then 1 frame 50 µs later), on a clean stream (packets every 20 ms, 0.4 ms of jitter) whose playout started
    /// in a top-up, so every packet is decoded in one. The level then sits 8 ms above the target, within the
    /// period's block (the decodes fall at pulls): latency control removes nothing after the start. (With the last
    /// pull, 1 frame, as its tolerance, every frame above the target was a surplus: the 8 ms were removed in the
    /// first pause, the decodes moved a period earlier and the margin left was the target's bare 2 ms.)
    @Test func topUpPullsDoNotMakeEveryFrameAboveTheTargetASurplus() throws {
        let packetCount = 500
        let stream = try JitterStream(packetCount: packetCount, signal: Self.talk(milliseconds: packetCount * 20))
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        // Packet 0 arrives at 0.03 ms: its wait reaches 10 ms (30 ms held and waited) between the pulls at 10 ms.
        var random = SplitMix64(seed: 5)
        let arrivals = stream.arrivals(count: packetCount) { index in 0.03 + (index == 0 ? 0 : Double.random(in: 0...0.4, using: &random)) }
        var next = 0
        var atOneSecond = JitterBufferStatistics()
        var pcm = [Float](repeating: 0, count: 159)
        for now in stride(from: 0, to: packetCount * 20, by: 10) {
            for (frameCount, pullMilliseconds) in [(159, Double(now)), (1, Double(now) + 0.05)] {
                while next < arrivals.count, arrivals[next].milliseconds <= pullMilliseconds {
                    let arrival = arrivals[next]
                    stream.packets[arrival.index].withUnsafeBytes { payload in
                        buffer.push(RTPPacket(header: arrival.header, payload: payload), arrivalTicks: Int64(arrival.milliseconds * 48))
                    }
                    next += 1
                }
                pcm.withUnsafeMutableBufferPointer { pcm in
                    buffer.pull(into: UnsafeMutableBufferPointer(rebasing: pcm[..<frameCount]), nowTicks: Int64(pullMilliseconds * 48))
                }
            }
            if now == 1000 { atOneSecond = buffer.statistics }
        }
        let stats = buffer.statistics
        let changed = stats.removedMilliseconds + stats.expandedMilliseconds
            - atOneSecond.removedMilliseconds - atOneSecond.expandedMilliseconds
        #expect(changed == 0 && stats.underruns == atOneSecond.underruns, "removed and added \(changed) ms after 1 s: \(stats)")
    }

    /// A sender that holds 100 ms of talk up and then sends it at once (a stalled thread catching up), packets
    /// `delay` ms after the device's periods start: the buffer runs dry, conceals, and drains the backlog. The
    /// stall's dip is forgotten (keeping delay would not have covered it), so what the drain left above the target
    /// goes too, a block of it cut from the next pause: two seconds after the stall the voice plays no later
    /// than before it, and stays there. (Before: the dip held the lowest level down and 10-22 ms more delay
    /// stayed for 4 to over 10 s, as in a 120 s call on a loaded machine.)
    @Test(arguments: [5.0, 9.0, 15.0])
    func theDelayAStallLeavesIsRemoved(delay: Double) throws {
        let packetCount = 500
        let signal = Self.talk(milliseconds: packetCount * 20)
        let stream = try JitterStream(packetCount: packetCount, signal: signal)
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        // Packets 80-84 (1.6-1.7 s) arrive together, just before packet 85.
        let arrivals = stream.arrivals(count: packetCount) { (80..<85).contains($0) ? 1699 + delay - Double($0) * 20 : delay }
        let timeline = PullTimeline(stream, buffer, arrivals, milliseconds: packetCount * 20)
        let stats = buffer.statistics
        let before = timeline.lag(of: signal, in: 300..<1300)
        let after = [4300, 6300, 8300].map { timeline.lag(of: signal, in: $0..<($0 + 1000)) }
        #expect(stats.late == 0 && after.allSatisfy { $0.correlation > 0.8 && $0.milliseconds <= before.milliseconds + 2 }
                && Set(after.map(\.milliseconds)).count == 1,
                "lag \(before.milliseconds) -> \(after.map(\.milliseconds)) ms: \(stats)")
    }

    /// Latency control allocates nothing: a paused device (skip), a burst in speech (accelerate) and in silence
    /// (drop), a long burst (burst skip), and packets in two groups 60 ms apart (the second overdue when the first is played: expand), each
    /// seen to happen.
    @Test func latencyControlDoesNotAllocate() throws {
        let signal = Self.voice(milliseconds: 8000, silentMilliseconds: 5000..<7000)
        let stream = try JitterStream(packetCount: 400, signal: signal)
        let arrivals = stream.arrivals(count: 400) { index in
            switch index {
            case 60..<65: 1305 - Double(index) * 20            // a burst in speech
            case 260..<265: 5305 - Double(index) * 20          // a burst in silence
            case 100..<106: Double(index < 103 ? 2045 : 2105) - Double(index) * 20   // two groups, 60 ms apart
            case 330..<350: 7005 - Double(index) * 20          // a 400 ms burst: skipped
            default: 5
            }
        }
        func allocations(playing buffer: JitterBuffer) -> UInt64 {
            var allocations: UInt64 = 0
            var measuring = false
            _ = PullTimeline(stream, buffer, arrivals, milliseconds: 8000, pauses: [3000..<3500], measure: { operation in
                // The first pulls warm up Opus; count from 200 ms on.
                guard measuring || buffer.statistics.received > 10 else { return operation() }
                measuring = true
                alloc_counter_start()
                operation()
                allocations += alloc_counter_stop()
            })
            return allocations
        }
        // A warm-up buffer takes every path first: in unoptimised builds the runtime allocates once for a type's
        // first use (the first accelerate, run alone: 3), which another test may or may not have caused before.
        _ = allocations(playing: try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30))
        let buffer = try JitterBuffer(sampleRate: Self.rate, initialDelayMilliseconds: 30)
        let counted = allocations(playing: buffer)
        let stats = buffer.statistics
        #expect(stats.skippedMilliseconds > 0 && stats.acceleratedMilliseconds > 0 && stats.silenceDroppedMilliseconds > 0
                && stats.expandedMilliseconds > 0 && stats.burstSkippedMilliseconds > 0, "\(stats)")
        #expect(counted == 0)
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
