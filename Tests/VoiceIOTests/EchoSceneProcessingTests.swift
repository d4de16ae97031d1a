import Foundation
import Testing
import VoiceIO

/// The whole processing stage (alignment, drift compensation, MDF, residual echo suppression) on generated
/// scenes through `OfflineVoiceProcessor`, device and voice rate 16 kHz.
@Suite("Echo scenes through the processing stage")
struct EchoSceneProcessingTests {
    static let rate = 16000
    static let fixture = EchoSceneFixture(sampleRate: rate)

    /// `blockMilliseconds`: the unit's processing block (10, or 5 as a call's unit runs).
    static func process(microphone: [Float], far: [Float], settings: EchoPipelineSettings = .init(),
                        blockMilliseconds: Int = 10) throws -> (output: [Float], processor: OfflineVoiceProcessor) {
        let processor = try OfflineVoiceProcessor(deviceRate: rate, voiceRate: rate, settings: settings,
                                                  processingBlockMilliseconds: blockMilliseconds)
        processor.enableAGC = false
        return (processor.process(microphone: microphone, loudspeaker: far), processor)
    }

    static func power(_ x: [Float], from: Double, to: Double) -> Double {
        let slice = x[Int(from * Double(rate))..<min(x.count, Int(to * Double(rate)))]
        return slice.reduce(0) { $0 + Double($1 * $1) } / Double(max(slice.count, 1))
    }

    static func decibels(_ ratio: Double) -> Double { 10 * log10(max(ratio, 1e-30)) }

    /// Microphone over output power from `from` to `to` seconds, in dB.
    static func erleDB(_ microphone: [Float], _ output: [Float], from: Double, to: Double) -> Double {
        decibels(power(microphone, from: from, to: to) / power(output, from: from, to: to))
    }

    /// The near talker's least-squares gain in `output` over `frames`, in dB (0 = untouched).
    static func nearGainDB(_ output: [Float], near: [Float], frames: Range<Int>) -> Double {
        var cross = 0.0, energy = 0.0
        for index in frames {
            cross += Double(output[index] * near[index])
            energy += Double(near[index] * near[index])
        }
        return 20 * log10(max(abs(cross / energy), 1e-6))
    }

    /// Echo through a room response, scaled.
    static func roomEcho(_ far: [Float], bulkMilliseconds: Double, seed: UInt64, gain: Float) -> [Float] {
        EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: bulkMilliseconds, seed: seed),
                                  gain: gain, count: far.count)
    }

    static func mix(_ signals: [Float]...) -> [Float] {
        var out = [Float](repeating: 0, count: signals.map(\.count).max() ?? 0)
        for signal in signals { for (index, sample) in signal.enumerated() { out[index] += sample } }
        return out
    }

    /// One echo path until `changeSeconds`, another after it (each a room response: bulk delay, seed, gain), over
    /// speech-like far-end voice and a faint noise floor; returns the far end and the microphone.
    static func pathChangeScene(seconds: Double, changeSeconds: Int, farSeed: UInt64,
                                before: (bulkMilliseconds: Double, seed: UInt64, gain: Float),
                                after: (bulkMilliseconds: Double, seed: UInt64, gain: Float),
                                noiseSeed: UInt64) -> (far: [Float], microphone: [Float]) {
        let change = changeSeconds * rate
        let far = fixture.speechLike(seconds: seconds, rms: 0.1, seed: farSeed)
        let echoBefore = roomEcho(far, bulkMilliseconds: before.bulkMilliseconds, seed: before.seed, gain: before.gain)
        let echoAfter = roomEcho(far, bulkMilliseconds: after.bulkMilliseconds, seed: after.seed, gain: after.gain)
        let echo = (0..<far.count).map { $0 < change ? echoBefore[$0] : echoAfter[$0] }
        return (far, mix(echo, fixture.noise(count: far.count, rms: 0.0003, seed: noiseSeed)))
    }

    @Test("200 ms bulk delay and 100 ppm drift: found, compensated, echo stays well cancelled")
    func bulkDelayAndDrift() throws {
        let seconds = 16.0
        let far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 11)
        let echo = Self.fixture.driftingEcho(far, bulkMilliseconds: 200, ppm: 100, gain: 0.5)
        let microphone = Self.mix(echo, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 12))
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        let erle = Self.erleDB(microphone, output, from: 6, to: seconds)
        #expect(erle > 38, "ERLE \(erle) dB after convergence")
        let arrival = try #require(processor.trace.last?.arrivalMilliseconds)
        #expect(abs(arrival - (200 - 100e-6 * seconds * 1000)) < 1.5, "echo arrival \(arrival) ms")
        let drift = try #require(processor.driftPPM)
        #expect(abs(drift - 100) < 25, "drift \(drift) ppm")
        #expect(processor.loudspeakerKneeDBFS == nil, "a linear loudspeaker taken to saturate")
    }

    @Test("the near talker keeps most of its level in double talk")
    func nearTalkerSurvivesDoubleTalk() throws {
        let seconds = 12.0
        let far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 21)
        var near = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 22)
        for index in 0..<(6 * Self.rate) { near[index] = 0 }
        let echo = Self.roomEcho(far, bulkMilliseconds: 80, seed: 23, gain: 0.5)
        let microphone = Self.mix(echo, near, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 24))
        let (output, _) = try Self.process(microphone: microphone, far: far)
        // Least-squares gain of the near talker in the output over the double talk.
        let gainDB = Self.nearGainDB(output, near: near, frames: (7 * Self.rate)..<Int(seconds * Double(Self.rate)))

        #expect(gainDB > -3, "near talker gain \(gainDB) dB in double talk")
        let echoOnly = Self.erleDB(microphone, output, from: 3, to: 6)
        // Modest on purpose: in this scene the double-talk detector fires falsely for about a second before the
        // near talker starts (the suppressor then goes gentle); the bound catches losing cancellation altogether.
        #expect(echoOnly > 12, "ERLE \(echoOnly) dB before the near talker starts")
    }

    @Test("after an echo-path change the echo is cancelled again within a second")
    func reconvergesAfterPathChange() throws {
        let seconds = 16.0
        let (far, microphone) = Self.pathChangeScene(seconds: seconds, changeSeconds: 8, farSeed: 31,
                                                     before: (60, 32, 0.5), after: (72, 33, 0.6), noiseSeed: 34)
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        let settled = Self.erleDB(microphone, output, from: 5, to: 8)
        let recovered = Self.erleDB(microphone, output, from: 10, to: seconds)
        let firstSecond = Self.erleDB(microphone, output, from: 8.5, to: 9.5)
        // The yardstick's re-convergence window: the first half second after the change. The filter must be found
        // wrong within a few blocks (error louder than the microphone and against the estimate), not after two
        // 0.1 s correlation windows, while the detector took the new echo for a near talker and let it through.
        let firstHalfSecond = Self.erleDB(microphone, output, from: 8, to: 8.5)
        #expect(settled > 40, "ERLE \(settled) dB before the change")
        #expect(firstHalfSecond > 20, "ERLE \(firstHalfSecond) dB in the first 0.5 s after the change")
        #expect(firstSecond > 35, "ERLE \(firstSecond) dB from 0.5 s to 1.5 s after the change")
        #expect(recovered > 40, "ERLE \(recovered) dB from 2 s after the change")
        #expect(processor.divergenceResetCount >= 1)

    }

    @Test("the echo path moves 5 ms later and 2 dB quieter: the blocks after its first are not taken for a talker")
    func movedPathAfterItsFirstBlock() throws {
        let (far, microphone) = Self.pathChangeScene(seconds: 11, changeSeconds: 8, farSeed: 31,
                                                     before: (60, 82, 0.5), after: (65, 83, 0.4), noiseSeed: 34)
        let (output, _) = try Self.process(microphone: microphone, far: far)
        // The first block after the move, its error still under the microphone, passes for a talker; the next, louder
        // than the microphone and against the estimate, is the filter's own error all the same: 36.6 dB over the first
        // half second (19.9 while the onset's block took away the quiet that judges them).
        let firstHalfSecond = Self.erleDB(microphone, output, from: 8, to: 8.5)
        #expect(firstHalfSecond > 28, "ERLE \(firstHalfSecond) dB in the first 0.5 s after the change")
    }

    @Test("a path 12 dB louder and half a millisecond shorter: the shadow filter takes over within a second")
    func louderPathTakenOverByTheShadow() throws {
        let seconds = 12.0
        let (far, microphone) = Self.pathChangeScene(seconds: seconds, changeSeconds: 8, farSeed: 31,
                                                     before: (60, 32, 0.15), after: (59.5, 33, 0.6), noiseSeed: 34)
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        // The new echo still correlates positively with the old estimate (the direct path moved by 8 samples), so
        // the misadjustment monitor does not see it, and the adapted filter's rate stays where its leak estimate
        // was: 34 dB over this half second without the shadow, 55 with it.
        let secondHalfSecond = Self.erleDB(microphone, output, from: 8.5, to: 9)
        #expect(secondHalfSecond > 45, "ERLE \(secondHalfSecond) dB from 0.5 s to 1 s after the change")
        #expect(processor.divergenceResetCount == 1)
    }

    @Test("the echo path turns 8 dB quieter and 2.5 ms later: its first half second is not let through")
    func quieterPathIsNotTakenForATalker() throws {
        let seconds = 12.0
        let (far, microphone) = Self.pathChangeScene(seconds: seconds, changeSeconds: 8, farSeed: 131,
                                                     before: (60, 132, 0.5), after: (62.5, 133, 0.2), noiseSeed: 134)
        let (output, _) = try Self.process(microphone: microphone, far: far)
        // Measured 49 dB; 19 dB while the block after the change passed for a talker (the old estimate, now
        // louder than the microphone, was let through until the filter was found misadjusted).
        let firstHalfSecond = Self.erleDB(microphone, output, from: 8, to: 8.5)
        #expect(firstHalfSecond > 30, "ERLE \(firstHalfSecond) dB in the first 0.5 s after the change")
    }

    @Test("a room ringing four times longer than the filter (RT60 0.8 s): the late tail is suppressed, the near talker kept")
    func suppressesTheTailPastTheFilter() throws {
        let seconds = 12.0
        let far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 41)
        var near = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 44)
        for index in 0..<(7 * Self.rate) { near[index] = 0 }
        // A dense diffuse tail: a reflection every millisecond for 900 ms, decaying 60 dB in 0.8 s.
        var noise = EchoSceneFixture.Noise(state: 42)
        let bulk = Self.rate / 20
        var taps = [(offset: bulk, gain: Float(0.5))]
        for millisecond in 2..<900 {
            let decay = Float(exp(-6.9 * Double(millisecond) / 800))
            taps.append((bulk + millisecond * Self.rate / 1000, 0.12 * decay * noise.next()))
        }
        let echo = EchoSceneFixture.convolve(far, taps: taps, gain: 1, count: far.count)
        let microphone = Self.mix(echo, near, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 43))
        let (output, _) = try Self.process(microphone: microphone, far: far)
        // The 200 ms filter alone leaves about 19 dB here (the tail past it); the late-tail model removes it.
        let erle = Self.erleDB(microphone, output, from: 4, to: 7)
        #expect(erle > 35, "ERLE \(erle) dB before the near talker starts")
        let gainDB = Self.nearGainDB(output, near: near, frames: (8 * Self.rate)..<far.count)
        #expect(gainDB > -4, "near talker gain \(gainDB) dB in double talk")
    }

    /// Median of 100 ms levels over a stretch, in dB.
    static func medianLevelDB(_ x: [Float], from: Double, to: Double) -> Double {
        let step = rate / 10
        var levels: [Double] = []
        var start = Int(from * Double(rate))
        while start + step <= min(x.count, Int(to * Double(rate))) {
            levels.append(decibels(power(x, from: Double(start) / Double(rate), to: Double(start + step) / Double(rate))))
            start += step
        }
        levels.sort()
        return levels[levels.count / 2]
    }

    @Test("a noisy room (-50 dBFS): the background keeps its level while the far end talks (no pumping)")
    func backgroundDoesNotPump() throws {
        let seconds = 14.0
        var far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 51)
        for index in (10 * Self.rate)..<far.count { far[index] = 0 }
        let echo = Self.roomEcho(far, bulkMilliseconds: 40, seed: 52, gain: 0.5)
        let microphone = Self.mix(echo, Self.fixture.noise(count: far.count, rms: 0.003, seed: 53))
        let (output, _) = try Self.process(microphone: microphone, far: far)
        // Far-end single talk from 3 s against the noise-only stretch from 11 s (after the echo tail).
        let pumping = Self.medianLevelDB(output, from: 3, to: 10) - Self.medianLevelDB(output, from: 11, to: seconds)
        // Before comfort noise was matched in level this read -17 dB (the line went dead while the far end talked).
        #expect(abs(pumping) < 3, "output level in far-end talk \(pumping) dB from the quiet stretch")
        let erle = Self.erleDB(microphone, output, from: 3, to: 10)
        #expect(erle > 20, "ERLE \(erle) dB in far-end talk")
    }

    @Test("8 kHz voice: the near talker keeps its level in double talk (speexdsp's wide DC notch narrowed)")
    func nearTalkerSurvivesDoubleTalkAt8kHz() throws {
        let rate = 8000, seconds = 12.0
        let fixture = EchoSceneFixture(sampleRate: rate)
        let far = fixture.speechLike(seconds: seconds, rms: 0.1, seed: 61)
        // A voice has little below its fundamental: the talker is high-passed at 100 Hz (two one-pole stages).
        var near = fixture.speechLike(seconds: seconds, rms: 0.1, seed: 62)
        let pole = Float(exp(-2 * Double.pi * 100 / Double(rate)))
        for _ in 0..<2 {
            var previousInput: Float = 0, previousOutput: Float = 0
            for index in near.indices {
                let output = pole * (previousOutput + near[index] - previousInput)
                previousInput = near[index]
                previousOutput = output
                near[index] = output
            }
        }
        for index in 0..<(6 * rate) { near[index] = 0 }
        let echo = EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: 60, seed: 63),
                                             gain: 0.5, count: far.count)
        let microphone = Self.mix(echo, near, fixture.noise(count: far.count, rms: 0.0003, seed: 64))
        var settings = EchoPipelineSettings()
        settings.isNoiseSuppressionEnabled = false
        let processor = try OfflineVoiceProcessor(deviceRate: rate, voiceRate: rate, settings: settings)
        processor.enableAGC = false
        let output = processor.process(microphone: microphone, loudspeaker: far)
        let gainDB = Self.nearGainDB(output, near: near, frames: (7 * rate)..<far.count)
        // speexdsp's 8 kHz notch (r = 0.9) took 4.5 dB of this talker's least-squares gain: it turns the phase
        // of everything up to a few hundred hertz.
        #expect(gainDB > -2, "near talker gain \(gainDB) dB in double talk at 8 kHz")
    }

    @Test("the echo path gets 10 dB louder: suppressed again within a second")
    func louderPath() throws {
        let seconds = 16.0
        let (far, microphone) = Self.pathChangeScene(seconds: seconds, changeSeconds: 8, farSeed: 81,
                                                     before: (60, 82, 0.15), after: (60, 82, 0.47), noiseSeed: 84)
        let (output, _) = try Self.process(microphone: microphone, far: far)
        let settled = Self.erleDB(microphone, output, from: 5, to: 8)
        let recovering = Self.erleDB(microphone, output, from: 8.5, to: 10)
        #expect(settled > 38, "ERLE \(settled) dB before the change")
        // The linear filter is not reset (its error correlates positively with its estimate); the suppressor's
        // ratios must follow. Measured 51 dB; a rule that took the louder echo for a near talker's onset and
        // stopped them learning left 25 dB.
        #expect(recovering > 38, "ERLE \(recovering) dB from 0.5 s to 2 s after the change")
    }

    @Test("before the delay is known, the echo of a reference 250 ms ahead of it is suppressed from the start")
    func echoBeforeTheDelayIsKnown() throws {
        let far = Self.fixture.speechLike(seconds: 4, rms: 0.1, seed: 101)
        let microphone = Self.mix(Self.roomEcho(far, bulkMilliseconds: 250, seed: 102, gain: 0.8),
                                  Self.fixture.noise(count: far.count, rms: 0.0003, seed: 103))
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        // The first half second after the echo arrives: measured 52 dB. Before the suppressor held the far end's
        // sound until the delay was found, the reference, 250 ms ahead, explained little of it: 18 dB.
        let early = Self.erleDB(microphone, output, from: 0.25, to: 0.75)
        #expect(early > 30, "ERLE \(early) dB before the delay was found")
        #expect(processor.isDelayEstimated, "the delay was never found")
    }

    /// The hold outlasts the first lock by half a second: the filter starts over there and the suppressor's spectra
    /// still hold the reference as it was before the jump, so a loud echo right after the lock read as a talker and
    /// passed (measured in the first second: 17.7 and 28.6 dB before, 45.1 and 49.2 dB now).
    @Test("the echo stays suppressed across the first lock", arguments: [(180.0, UInt64(271)), (240, 241)])
    func echoAcrossTheFirstLock(bulkMilliseconds: Double, seed: UInt64) throws {
        let far = Self.fixture.speechLike(seconds: 4, rms: 0.1, seed: seed)
        let clipped = far.map { max(-0.2, min(0.2, $0)) }
        let microphone = Self.mix(Self.roomEcho(clipped, bulkMilliseconds: bulkMilliseconds, seed: seed + 1, gain: 1),
                                  Self.fixture.noise(count: far.count, rms: 0.0003, seed: seed + 2))
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        let lock = try #require(processor.trace.first { $0.delayMilliseconds > 0 }?.endSeconds)
        #expect(lock <= 1, "locked at \(lock) s")
        let firstSecond = Self.erleDB(microphone, output, from: 0, to: 1)
        #expect(firstSecond > 35, "ERLE \(firstSecond) dB over the first second")
    }

    /// The talker 6 dB under the far end's reference, and 10 dB over it (a microphone louder than the reference is no
    /// echo path's gain while nothing cancels).
    @Test("with no echo to find (a headset), a near talker over the far end is suppressed only at first",
          arguments: [Float(0.05), 0.3])
    func noEchoToFind(nearRMS: Float) throws {
        let seconds = 8.0
        let far = Self.fixture.speechLike(seconds: seconds, rms: 0.1, seed: 104)
        let near = Self.fixture.speechLike(seconds: seconds, rms: nearRMS, seed: 105)
        let microphone = Self.mix(near, Self.fixture.noise(count: far.count, rms: 0.0003, seed: 106))
        let (output, processor) = try Self.process(microphone: microphone, far: far)
        func gainDB(from: Double, to: Double) -> Double {
            Self.nearGainDB(output, near: near, frames: Int(from * Double(Self.rate))..<Int(to * Double(Self.rate)))
        }
        #expect(!processor.isDelayEstimated, "a delay was found in a microphone without echo")
        // Held at first (the far end's sound is taken for echo whose delay is not known yet): measured -55 dB.
        let held = gainDB(from: 0.5, to: 2), after = gainDB(from: 5, to: seconds)
        #expect(held < -10, "near talker gain \(held) dB while the far end's sound is held")
        // The hold ends after 3 s of far end without a lock; the talker then loses what it lost before the hold
        // existed (2.1 dB in this unbroken double talk), not more (2.6 dB while the hold let it teach the ratios).
        #expect(after > -2.3, "near talker gain \(after) dB from 5 s")
    }

    /// A call's 5 ms blocks learn a steady sound as 10 ms blocks do through the whole stage: white noise alone for 8 s,
    /// the echo 30 ms late through a room 150 ms long, the linear filter's ERLE over 6-8 s (the trace's mean) at 5 ms
    /// within 3 dB of 10 ms's. Measured: 33.1 and 59.7 dB at 5 ms against 30.8 and 34.6 at 10 ms (quiet, loud). Before
    /// every partition of a 5 ms filter was constrained every second block, 24.1 and 25.5: the rotating constraint
    /// threw away, every 19 blocks, what a partition's spare taps had learned (`BlockAdaptiveFilter`).
    /// `level`: the noise's peak (uniform white noise).
    @Test("5 ms blocks learn white noise through a room as 10 ms blocks do", arguments: [Float(0.05), 0.25])
    func fiveMillisecondBlocksLearnWhiteNoise(level: Float) throws {
        let far = Self.fixture.noise(count: 8 * Self.rate, rms: level / 1.732, seed: 17)
        let microphone = Self.roomEcho(far, bulkMilliseconds: 30, seed: 3, gain: 1)
        func lateLinearERLE(blockMilliseconds: Int) throws -> Double {
            let (_, processor) = try Self.process(microphone: microphone, far: far, blockMilliseconds: blockMilliseconds)
            let late = processor.trace.filter { $0.endSeconds > 6.01 }.map(\.linearERLEDB)
            try #require(late.count >= 3)
            return late.reduce(0, +) / Double(late.count)
        }
        let (ten, five) = (try lateLinearERLE(blockMilliseconds: 10), try lateLinearERLE(blockMilliseconds: 5))
        #expect(ten > 25, "10 ms blocks: \(ten) dB")
        #expect(five > ten - 3, "5 ms blocks \(five) dB, 10 ms \(ten) dB")
    }
}
