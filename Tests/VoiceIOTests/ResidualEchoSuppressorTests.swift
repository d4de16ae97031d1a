import Foundation
import Testing
import CAllocCounter
@testable import VoiceIO

@Suite struct ResidualEchoSuppressorTests {
    static let rate = 16000
    static let block = 160

    /// What a linear canceller would hand over: the microphone (echo of a clipping speaker + near + noise),
    /// an echo estimate that misses 20 dB of the linear echo and all of the clipping's harmonics.
    struct Scene {
        var far: [Float], microphone: [Float], estimate: [Float], output: [Float], near: [Float], noise: [Float]
    }

    /// `farEndStartSeconds`: the far end is silent before it.
    static func scene(seconds: Double, farEnd: Bool, nearEnd: Bool, noiseRMS: Float = 0.001,
                      farEndStartSeconds: Double = 0) -> Scene {
        let fixture = EchoSceneFixture(sampleRate: rate)
        let count = Int(seconds * Double(rate))
        var far = farEnd ? fixture.speechLike(seconds: seconds, seed: 41) : [Float](repeating: 0, count: count)
        for index in 0..<min(count, Int(farEndStartSeconds * Double(rate))) { far[index] = 0 }
        let clipped = far.map { max(-0.15, min(0.15, $0)) }
        let taps = fixture.roomResponse(bulkMilliseconds: 2, seed: 12)
        let echo = EchoSceneFixture.convolve(clipped, taps: taps, gain: 0.5, count: count)
        let linear = EchoSceneFixture.convolve(far, taps: taps, gain: 0.5, count: count)
        // Least-squares gain of the linear echo against the clipped one: the best a linear filter does.
        let fit = zip(echo, linear).reduce(Float(0)) { $0 + $1.0 * $1.1 } / max(linear.reduce(0) { $0 + $1 * $1 }, 1e-20)
        let estimate = linear.map { $0 * fit * 0.9 }
        let near = nearEnd ? fixture.speechLike(seconds: seconds, rms: 0.05, seed: 43) : [Float](repeating: 0, count: count)
        let noise = fixture.noise(count: count, rms: noiseRMS, seed: 44)
        let microphone = (0..<count).map { echo[$0] + near[$0] + noise[$0] }
        let output = (0..<count).map { microphone[$0] - estimate[$0] }
        return Scene(far: far, microphone: microphone, estimate: estimate, output: output, near: near, noise: noise)
    }

    /// A canceller that estimates the echo exactly: its output is the room's `noise` and a talker from `onset` on.
    static func perfectlyEstimatedScene(far: [Float], estimate: [Float], talker: [Float], onset: Int,
                                        noise: [Float]) -> Scene {
        var near = [Float](repeating: 0, count: far.count)
        for i in 0..<talker.count { near[onset + i] = talker[i] }
        let output = (0..<far.count).map { near[$0] + noise[$0] }
        return Scene(far: far, microphone: (0..<far.count).map { output[$0] + estimate[$0] }, estimate: estimate,
                     output: output, near: near, noise: noise)
    }

    /// Runs the suppressor (by default one of `block` frames) in its own blocks; returns its output moved back by its
    /// latency (same time base as the input). `beforeBlock` and `afterBlock`, if given, are called before and after
    /// each block with its first frame.
    static func suppress(_ scene: Scene, suppressor: ResidualEchoSuppressor? = nil,
                         beforeBlock: (Int) -> Void = { _ in }, afterBlock: (Int) -> Void = { _ in }) -> [Float] {
        let res = suppressor ?? ResidualEchoSuppressor(sampleRate: rate, blockFrameCount: block)
        let block = res.blockFrameCount
        var out = scene.output
        out.withUnsafeMutableBufferPointer { o in
            scene.estimate.withUnsafeBufferPointer { y in
                scene.far.withUnsafeBufferPointer { x in
                    for start in stride(from: 0, through: o.count - block, by: block) {
                        beforeBlock(start)
                        res.process(output: UnsafeMutableBufferPointer(rebasing: o[start..<start + block]),
                                    echoEstimate: UnsafeBufferPointer(rebasing: y[start..<start + block]),
                                    reference: UnsafeBufferPointer(rebasing: x[start..<start + block]))
                        afterBlock(start)
                    }
                }
            }
        }
        return Array(out[res.latencyFrames...]) + [Float](repeating: 0, count: res.latencyFrames)
    }

    static func power(_ x: [Float], from: Double, to: Double) -> Float {
        let a = Int(from * Double(rate)), b = min(x.count, Int(to * Double(rate)))
        return x[a..<b].reduce(0) { $0 + $1 * $1 } / Float(b - a)
    }

    static func decibels(_ ratio: Float) -> Float { 10 * log10(max(ratio, 1e-30)) }

    /// The near talker's least-squares gain in `out` over `frames`, in dB (0 = untouched).
    static func nearGainDB(_ out: [Float], near: [Float], frames: Range<Int>) -> Float {
        var projection: Float = 0, energy: Float = 0
        for i in frames { projection += out[i] * near[i]; energy += near[i] * near[i] }
        return 20 * log10(projection / energy)
    }

    /// Quiet noise, so the residual (16 dB below the echo) is far above the floor: suppression must take at
    /// least 16 dB more off it (measured: about 20). The far end starts after the comfort noise's start frames, as a
    /// call's first echo does: with the residual in them, the noise that fills it stood 5-9 dB over the room until
    /// the far end's first pause near 3 s (15.4 dB more; the first 10 ms block, the speech's quiet onset, was all the
    /// floor read before, and the test passed on that).
    @Test func suppressesTheResidualOfAClippingSpeaker() {
        let scene = Self.scene(seconds: 4, farEnd: true, nearEnd: false, noiseRMS: 0.0002, farEndStartSeconds: 0.1)
        let out = Self.suppress(scene)
        let microphone = Self.power(scene.microphone, from: 1, to: 3.9)
        let linearOnly = Self.decibels(microphone / Self.power(scene.output, from: 1, to: 3.9))
        let total = Self.decibels(microphone / Self.power(out, from: 1, to: 3.9))
        let ceiling = Self.decibels(microphone / Self.power(scene.noise, from: 1, to: 3.9))
        #expect(linearOnly < 20, "the scene must leave a residual: \(linearOnly) dB")
        #expect(ceiling > 38)
        #expect(total > linearOnly + 16, "echo reduction \(total) dB, \(linearOnly) dB before, noise at \(ceiling) dB")
    }

    /// A stream's first 15 ms of zeros before the room (-60 dBFS) and, from 0.1 s, the far end over a filter that
    /// leaves a residual: the output while the far end talks (the comfort noise filling what is taken off) stands where
    /// it stands without the zeros. Counted in, the 10 ms block that was half zeros started the floor low, held there
    /// by the echo: the output 4.1 dB under the room, 0.5 dB without the zeros.
    @Test func aStreamsFirstZerosAreNotTheRoom() {
        let (level, control) = Self.farEndLevels(zeroMilliseconds: 15, farEndStartSeconds: 0.1)
        #expect(abs(control) < 3, "output \(control) dB from the room without the zeros")
        #expect(abs(level - control) < 1, "output \(level) dB from the room after the zeros, \(control) dB without")
    }

    /// A device that starts late: its first 100 or 300 ms are zeros, then the room (-60 dBFS), and from 0.5 s the far
    /// end. The output while the far end talks stands where it stands without the zeros. With the zeros in the floor's
    /// window, the room's onset after them passing for a talker, the floor stayed low, then held there by the echo:
    /// 5.9 dB under the room while the far end talked (now 0.5 dB from the output without the zeros).
    @Test(arguments: [100, 300])
    func theRoomAfterADevicesLateStartIsTheFloor(zeroMilliseconds: Int) {
        let (level, control) = Self.farEndLevels(zeroMilliseconds: zeroMilliseconds, farEndStartSeconds: 0.5)
        #expect(abs(control) < 3, "output \(control) dB from the room without the zeros")
        #expect(abs(level - control) < 1.5, "output \(level) dB from the room after the zeros, \(control) dB without")
    }

    /// The output's level from 1 s to 3.9 s over the room's (-60 dBFS), in dB, of a scene whose far end starts at
    /// `farEndStartSeconds` over a filter that leaves a residual, with the stream's first `zeroMilliseconds` zeroed
    /// (`level`) and without (`control`).
    static func farEndLevels(zeroMilliseconds: Int, farEndStartSeconds: Double) -> (level: Float, control: Float) {
        let scene = Self.scene(seconds: 4, farEnd: true, nearEnd: false, noiseRMS: 0.001,
                               farEndStartSeconds: farEndStartSeconds)
        var zeroed = scene
        for i in 0..<(zeroMilliseconds * Self.rate / 1000) {
            zeroed.microphone[i] = 0
            zeroed.output[i] = 0
        }
        let noise = Self.power(scene.noise, from: 1, to: 3.9)
        return (Self.decibels(Self.power(Self.suppress(zeroed), from: 1, to: 3.9) / noise),
                Self.decibels(Self.power(Self.suppress(scene), from: 1, to: 3.9) / noise))
    }

    /// After half a second of far-end single talk without any sign of the near talker, the residual's peaks are
    /// taken firmly too: the clipping speaker's residual loses clearly more than with the single-talk
    /// overestimate alone (measured: 24 dB, 20 without the firmer hold beyond the linear filter).
    @Test func takesTheResidualFirmlyOnceTheNearEndIsQuiet() {
        let scene = Self.scene(seconds: 4, farEnd: true, nearEnd: false, noiseRMS: 0.0002)
        let out = Self.suppress(scene)
        let microphone = Self.power(scene.microphone, from: 1.5, to: 3.9)
        let linearOnly = Self.decibels(microphone / Self.power(scene.output, from: 1.5, to: 3.9))
        let total = Self.decibels(microphone / Self.power(out, from: 1.5, to: 3.9))
        #expect(total > linearOnly + 0, "echo reduction \(total) dB, \(linearOnly) dB before")
    }

    /// The echo gets 8 dB louder at 2 s while the estimate stays as it was (the linear filter has not caught up
    /// yet). The error is then mostly the estimate scaled: the coherent part must be suppressed from the first
    /// few hundred ms on, not only once the learned ratios catch up with it.
    @Test func suppressesALouderEchoTheFilterHasNotCaughtUpWith() {
        var scene = Self.scene(seconds: 4, farEnd: true, nearEnd: false, noiseRMS: 0.0002)
        let step = 2 * Self.rate
        for i in step..<scene.output.count {
            let echo = scene.microphone[i] - scene.noise[i]
            scene.microphone[i] = 2.5 * echo + scene.noise[i]
            scene.output[i] = scene.microphone[i] - scene.estimate[i]
        }
        let out = Self.suppress(scene)
        let microphone = Self.power(scene.microphone, from: 2.2, to: 2.7)
        let linearOnly = Self.decibels(microphone / Self.power(scene.output, from: 2.2, to: 2.7))
        let total = Self.decibels(microphone / Self.power(out, from: 2.2, to: 2.7))
        #expect(linearOnly < 6, "the step must leave most of the echo: \(linearOnly) dB")
        #expect(total > 25, "echo reduction 0.2-0.7 s after the step \(total) dB, \(linearOnly) dB before")
    }

    @Test func keepsTheNearTalkerInDoubleTalk() {
        let scene = Self.scene(seconds: 5, farEnd: true, nearEnd: true)
        let out = Self.suppress(scene)
        let gain = Self.nearGainDB(out, near: scene.near, frames: Self.rate..<(5 * Self.rate - Self.block))
        #expect(gain > -3, "near talker gain \(gain) dB")
    }

    /// The talker's softer sounds after its louder ones (a syllable's end, the gap to the next): 10 ms blocks 6 to 25
    /// dB under the talker's loudest block of the quarter second before, over a clipping loudspeaker's leftover in a
    /// room that does not ring past the filter. Those the detector hears, or that stand over its estimate of the echo
    /// left, keep the gentle gain of double talk as the talker's tail; the rest of that quarter second took the firm
    /// gain of far-end single talk, and only a hall's kept the gentle one: 13 of the 212 such blocks came out more than
    /// 10 dB under the talker. Now every room's does (`process`): 4. The control, a filter that started over
    /// (`isFilterSettled` false: no talker's tail at all), loses 29.
    @Test func keepsTheTalkersSofterSoundsBetweenItsWords() {
        let scene = Self.scene(seconds: 6, farEnd: true, nearEnd: true)
        // From the first second on: the ratios start pessimistic, and the talker with them.
        let soft = EchoSceneFixture(sampleRate: Self.rate).softBlockStarts(
            of: scene.near, frames: 0..<scene.near.count, blockFrameCount: Self.block).filter { $0 >= Self.rate }
        func lostBlocks(isFilterSettled: Bool) -> Int {
            let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
            let out = Self.suppress(scene, suppressor: suppressor, beforeBlock: { _ in
                suppressor.isFilterSettled = isFilterSettled
            })
            func power(_ x: [Float], from start: Int) -> Float {
                x[start..<(start + Self.block)].reduce(Float(0)) { $0 + $1 * $1 }
            }
            return soft.filter { power(out, from: $0) < power(scene.near, from: $0) * 0.1 }.count
        }
        let kept = lostBlocks(isFilterSettled: true), control = lostBlocks(isFilterSettled: false)
        #expect(kept <= 7, "\(kept) of the talker's softer blocks more than 10 dB under it")
        #expect(control >= 20, "control: no talker's tail, \(control) of them more than 10 dB under it")
    }

    /// A talker who starts with the far end's onset after a pause. The filter cancels the echo (the output holds
    /// the room's noise) while the far end talks for 3 s and through a second in which only its line noise plays:
    /// a fading reference under which the noise's fluctuations read as a growing coupling. Then the far end comes
    /// back, and the near talker with it: the detector must hear the talker and the talker keep its level.
    @Test func hearsATalkerWhoStartsWithTheFarEndsOnset() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 6 * Self.rate, onset = 4 * Self.rate
        var far = fixture.noise(count: count, rms: 0.003, seed: 51)
        let before = fixture.speechLike(seconds: 3, rms: 0.1, seed: 52), after = fixture.speechLike(seconds: 2, rms: 0.2, seed: 53)
        for i in 0..<before.count { far[i] += before[i] }
        for i in 0..<after.count { far[onset + i] += after[i] }
        let scene = Self.perfectlyEstimatedScene(far: far, estimate: far.map { 0.001 * $0 },
                                                 talker: fixture.speechLike(seconds: 2, rms: 0.05, seed: 56),
                                                 onset: onset, noise: fixture.noise(count: count, rms: 0.001, seed: 57))
        let out = Self.suppress(scene)
        let gain = Self.nearGainDB(out, near: scene.near, frames: onset..<(count - Self.block))
        // With one coupling for the gain and the detector the talker went unheard and lost 10.7 dB (now 2.1).
        #expect(gain > -4, "near talker gain \(gain) dB")
    }

    /// Far-end phrases of one second with pauses between them, echo perfectly estimated (the output is the room's
    /// white noise), and a talker 4 dB under the echo. In each pause the estimate's tail fades into the noise, whose
    /// fluctuation over it reads as leakage; at the next phrase that leakage overstated the echo and the talker
    /// went unheard for a good part of it (lost 1.4-3.9 dB, 67-91 % of its blocks heard). The detector's own ρ,
    /// learned from the leftover beyond the noise, hears it (measured: 99 %, no more than 0.4 dB lost).
    @Test(arguments: [0.4, 0.5, 0.6, 1.2]) func hearsATalkerAtTheFarEndsPhraseOnsets(pauseSeconds: Double) {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 10 * Self.rate, onset = 5 * Self.rate
        var far = fixture.speechLike(seconds: 10, rms: 0.1, seed: 71)
        let period = Int((1 + pauseSeconds) * Double(Self.rate))
        for i in 0..<count where i % period >= Self.rate { far[i] = 0 }
        let taps = fixture.roomResponse(bulkMilliseconds: 2, tailMilliseconds: 300, seed: 72)
        let scene = Self.perfectlyEstimatedScene(far: far,
                                                 estimate: EchoSceneFixture.convolve(far, taps: taps, gain: 0.5, count: count),
                                                 talker: fixture.speechLike(seconds: 5, rms: 0.03, seed: 73),
                                                 onset: onset, noise: fixture.noise(count: count, rms: 0.003, seed: 74))
        let near = scene.near
        let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
        var heard = 0, talking = 0
        let out = Self.suppress(scene, suppressor: suppressor) { start in
            let power = near[start..<start + Self.block].reduce(Float(0)) { $0 + $1 * $1 } / Float(Self.block)
            guard power > 4 * 0.003 * 0.003 else { return }
            talking += 1
            if suppressor.detector.nearEndActive { heard += 1 }
        }
        let gain = Self.nearGainDB(out, near: near, frames: onset..<(count - Self.block))
        #expect(Float(heard) > 0.95 * Float(talking), "heard in \(heard) of \(talking) blocks")
        #expect(gain > -1, "near talker gain \(gain) dB")
    }

    /// The linear filter's own error at a double talk's onset (a pre-echo the pipeline cannot yet tell from a moved
    /// path) is suppressed for those blocks only: what the suppressor learned of the room stays, and the talker keeps
    /// its level after them. Control: forgetting the coupling at those blocks instead (what the pipeline did) takes
    /// the talker for echo until the ratios relearn (measured: 0.7 dB lost against 4.7 dB; the flagged blocks 16 dB down).
    @Test func suppressesTheFiltersOwnErrorWithoutForgettingTheRoom() {
        let scene = Self.scene(seconds: 8, farEnd: true, nearEnd: true)
        let onset = 4 * Self.rate
        var near = scene.near, microphone = scene.microphone, output = scene.output
        for i in 0..<onset {
            microphone[i] -= near[i]
            output[i] -= near[i]
            near[i] = 0
        }
        let doubleTalk = Scene(far: scene.far, microphone: microphone, estimate: scene.estimate, output: output,
                               near: near, noise: scene.noise)
        let flagged = onset..<(onset + 3 * Self.block)
        func run(forgetting: Bool) -> (gain: Float, flaggedLevel: Float) {
            let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
            let out = Self.suppress(doubleTalk, suppressor: suppressor, beforeBlock: { start in
                let isFlagged = flagged.contains(start)
                if forgetting {
                    if isFlagged { suppressor.forgetEchoCoupling(); suppressor.forgetNearEnd() }
                } else {
                    suppressor.isOutputFilterError = isFlagged
                }
            })
            let gain = Self.nearGainDB(out, near: near, frames: flagged.upperBound..<(6 * Self.rate))
            let level = Self.decibels(Self.power(out, from: 4.01, to: 4.02) / Self.power(output, from: 4.01, to: 4.02))
            return (gain, level)
        }
        let kept = run(forgetting: false), forgot = run(forgetting: true)
        #expect(kept.flaggedLevel < -10, "the flagged blocks are suppressed: \(kept.flaggedLevel) dB")
        #expect(kept.gain > -1.5, "near talker gain \(kept.gain) dB after the flagged blocks")
        #expect(forgot.gain < kept.gain - 3, "control: forgetting the room costs the talker \(forgot.gain) dB")
    }

    /// A path that grows a late reflection (80 ms after the echo, 6 dB under it) at 3 s, while the filter's estimate
    /// stays the old path's: the output is then the new reflection, well over what the ratios learned, and not coherent
    /// with the estimate in a block (its far end is 80 ms older). The filter finds such blocks leaked echo
    /// (`filterFindsClearlyLeakedEcho`, its leaked echo 10 times its error or more); after a quiet near end the
    /// detector takes them for echo, not for a talker who starts, and the ratios learn them: our u01 let 0.2 s of the echo
    /// through at 10-24 dB when the far end came back after a pause to a filter that had not learned all of its sound
    /// (that half second's ERLE 23 dB, 50 now). Not found, the detector hears a talker and the ratios never rise.
    @Test func takesLeakedEchoAfterAQuietNearEndForEcho() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 5 * Self.rate, grown = 3 * Self.rate
        let far = fixture.speechLike(seconds: 5, seed: 41)
        let taps = fixture.roomResponse(bulkMilliseconds: 2, seed: 12)
        let echo = EchoSceneFixture.convolve(far, taps: taps, gain: 0.5, count: count)
        let lateTaps = taps.map { (offset: $0.offset + Self.rate * 80 / 1000, gain: $0.gain) }
        let late = EchoSceneFixture.convolve(far, taps: lateTaps, gain: 0.25, count: count)
        let noise = fixture.noise(count: count, rms: 0.0003, seed: 44)
        let microphone = (0..<count).map { echo[$0] + ($0 >= grown ? late[$0] : 0) + noise[$0] }
        let estimate = echo.map { 0.99 * $0 }
        let output = (0..<count).map { microphone[$0] - estimate[$0] }
        let scene = Scene(far: far, microphone: microphone, estimate: estimate, output: output,
                          near: [Float](repeating: 0, count: count), noise: noise)
        func suppression(flagged: Bool) -> Float {
            let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
            let out = Self.suppress(scene, suppressor: suppressor, beforeBlock: { start in
                suppressor.filterFindsLeakedEcho = flagged && start >= grown
                suppressor.filterFindsClearlyLeakedEcho = suppressor.filterFindsLeakedEcho
            })
            return Self.decibels(Self.power(output, from: 3.5, to: 5) / Self.power(out, from: 3.5, to: 5))
        }
        let leaked = Self.decibels(Self.power(microphone, from: 3, to: 5) / Self.power(output, from: 3, to: 5))
        let found = suppression(flagged: true), unfound = suppression(flagged: false)
        #expect(leaked < 12, "the filter takes \(leaked) dB off the grown path")
        #expect(found > 12, "\(found) dB taken off the leaked echo 0.5-2 s after the path grew")
        #expect(unfound < found - 9, "control: not found leaked, \(unfound) dB taken off")
    }

    /// A talker stops at 4 s; from 3.5 s a moved path adds echo the filter's estimate does not explain, a little over
    /// what the filter left before. Within a quarter second of the talker, output above the detector's estimate is held
    /// at the gentle gain of double talk as the talker's tail, unless the filter started over (`isFilterSettled` false,
    /// as `EchoPipeline` sets it for 2 s after a restart): then the moved path's echo there is taken off firmly.
    /// Measured over that quarter second: 13.2 dB taken off after a restart, 5.8 dB held as the talker's tail.
    @Test func takesAMovedPathsEchoAfterTheTalkerForEchoOnceTheFilterStartedOver() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 6 * Self.rate, moved = Self.rate * 7 / 2, talkerEnd = 4 * Self.rate
        let far = fixture.speechLike(seconds: 6, seed: 41)
        let echo = EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: 2, seed: 12), gain: 0.5,
                                             count: count)
        let leftover = EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: 20, seed: 13),
                                                 gain: 0.5 * 0.15, count: count)
        let talker = fixture.speechLike(seconds: 2, rms: 0.05, seed: 43)
        // The filter leaves a tenth of the echo (-20 dB), which the suppressor's ratios learn over the first 2 s.
        var scene = Self.perfectlyEstimatedScene(far: far, estimate: echo.map { 0.9 * $0 }, talker: talker,
                                                 onset: 2 * Self.rate,
                                                 noise: fixture.noise(count: count, rms: 0.0003, seed: 44))
        for i in 0..<count {
            let left = 0.1 * echo[i] + (i >= moved ? leftover[i] : 0)
            scene.output[i] += left
            scene.microphone[i] += left
        }
        func suppression(restarted: Bool) -> Float {
            let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
            let out = Self.suppress(scene, suppressor: suppressor, beforeBlock: { start in
                suppressor.isFilterSettled = !(restarted && start >= moved)
            })
            let span = Double(talkerEnd) / Double(Self.rate)
            return Self.decibels(Self.power(scene.output, from: span, to: span + 0.25)
                                 / Self.power(out, from: span, to: span + 0.25))
        }
        let restarted = suppression(restarted: true), settled = suppression(restarted: false)
        #expect(restarted > 10, "\(restarted) dB taken off the moved path's echo after the talker (filter restarted)")
        #expect(restarted > settled + 4, "\(restarted) dB taken off after a restart, \(settled) dB without (control)")
    }

    /// A hot microphone (the echo 12 dB or more above the reference) under a filter that starts over (a moved path): the
    /// output is the whole echo again, and the ratios to the reference restart where the echo comes back, not at the
    /// reference's own level, where the detector took the echo for a talker and its ratios then could not rise (our
    /// hot-microphone g07: 7-14 dB of ERLE for 3 s after its path moved, re-converged in 0.5 s now).
    @Test func suppressesAHotEchoWhenTheFilterStartsOver() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 8 * Self.rate, restart = 4 * Self.rate
        let far = fixture.speechLike(seconds: 8, seed: 41)
        let echo = EchoSceneFixture.convolve(far, taps: fixture.roomResponse(bulkMilliseconds: 2, seed: 12), gain: 8,
                                             count: count)
        let noise = fixture.noise(count: count, rms: 0.0003, seed: 44)
        let estimate = (0..<count).map { $0 < restart ? 0.99 * echo[$0] : 0 }
        let output = (0..<count).map { echo[$0] + noise[$0] - estimate[$0] }
        let scene = Scene(far: far, microphone: (0..<count).map { echo[$0] + noise[$0] }, estimate: estimate,
                          output: output, near: [Float](repeating: 0, count: count), noise: noise)
        let level = Self.decibels(Self.power(echo, from: 1, to: 8) / Self.power(far, from: 1, to: 8))
        #expect(level > 12, "the echo only \(level) dB above the reference")
        let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
        let out = Self.suppress(scene, suppressor: suppressor, beforeBlock: { start in
            // What `EchoPipeline` tells the suppressor when its filter starts over (for 2 s: the whole span measured).
            if start == restart {
                suppressor.forgetEchoCoupling()
                suppressor.forgetNearEnd()
                suppressor.isFilterSettled = false
            }
        })
        let suppression = Self.decibels(Self.power(output, from: 4.1, to: 6) / Self.power(out, from: 4.1, to: 6))
        #expect(suppression > 25, "\(suppression) dB taken off the restarted filter's output over 4.1-6 s")
    }

    /// A filter that restarted under a talker (a path that moved in double talk) and learns from the talker: from 5 s
    /// its estimate is half the echo's and against the talker (−0.6 × the talker), so the output, 1.6 times the talker
    /// over half the echo, is louder than the microphone and against the estimate in most blocks, as the filter's own
    /// error after a quieter or shifted path is. Judged so whenever the detector was not hearing a talker at that
    /// moment, the talker's blocks went to the comfort noise between its words (measured: −9.5 dB; −3.4 dB judged only
    /// once the near end has been quiet for half a second).
    @Test func keepsATalkerWhoPullsARestartedFilter() {
        let scene = Self.scene(seconds: 8, farEnd: true, nearEnd: true)
        let pulled = 5 * Self.rate
        var near = scene.near, estimate = scene.estimate
        for i in 0..<(3 * Self.rate) { near[i] = 0 }
        for i in pulled..<near.count { estimate[i] = 0.5 * scene.estimate[i] - 0.6 * near[i] }
        let microphone = (0..<near.count).map { scene.microphone[$0] - scene.near[$0] + near[$0] }
        let output = (0..<near.count).map { microphone[$0] - estimate[$0] }
        let out = Self.suppress(Scene(far: scene.far, microphone: microphone, estimate: estimate, output: output,
                                      near: near, noise: scene.noise))
        let gain = Self.nearGainDB(out, near: near.map { 1.6 * $0 }, frames: pulled..<(8 * Self.rate - Self.block))
        #expect(gain > -5, "talker over the pulled filter \(gain) dB")
    }

    /// A loudspeaker's distortion where the far end has no energy: a low-passed far end whose leftover is
    /// high-frequency noise that follows its loudness (what clipping spreads upwards). Neither ρ·|Y|² nor γ·|X|²
    /// sees it there; δ·Σ|Y|² does.
    @Test func suppressesDistortionWhereTheFarEndIsFaint() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let count = 6 * Self.rate
        var far = fixture.speechLike(seconds: 6, rms: 0.1, seed: 61)
        for _ in 0..<4 {  // four one-pole low-passes at about 600 Hz
            var state: Float = 0
            for i in 0..<count { state += 0.2 * (far[i] - state); far[i] = state }
        }
        let estimate = far.map { 0.5 * $0 }
        // Distortion: white noise following the far end's envelope (10 ms), differenced eight times: above the
        // detector's band (4 kHz), so that it is not taken for a talker.
        let white = fixture.noise(count: count, rms: 1, seed: 62)
        var envelope: Float = 0, distortion = [Float](repeating: 0, count: count)
        for i in 0..<count {
            envelope += 0.006 * (abs(estimate[i]) - envelope)
            distortion[i] = 0.05 * envelope * white[i]
        }
        for _ in 0..<8 { for i in stride(from: count - 1, to: 0, by: -1) { distortion[i] -= distortion[i - 1] } }
        // 20 dB under the echo.
        let scale = 0.1 * (Self.power(estimate, from: 0, to: 6) / Self.power(distortion, from: 0, to: 6)).squareRoot()
        for i in 0..<count { distortion[i] *= scale }
        let noise = fixture.noise(count: count, rms: 0.0001, seed: 63)
        let output = (0..<count).map { distortion[$0] + noise[$0] }
        let scene = Scene(far: far, microphone: (0..<count).map { output[$0] + estimate[$0] }, estimate: estimate,
                          output: output, near: [Float](repeating: 0, count: count), noise: noise)
        let out = Self.suppress(scene)
        let suppression = Self.decibels(Self.power(output, from: 3, to: 5.9) / Self.power(out, from: 3, to: 5.9))
        // Measured 21 dB; 0.7 dB without δ.
        #expect(suppression > 10, "distortion suppressed by \(suppression) dB")
    }

    /// At 10 ms blocks and at a call's 5 ms, whose analysis window spans four blocks and its synthesis the last two
    /// (`LowDelayWindows`): the output is the input one block late.
    @Test(arguments: [160, 80]) func passesTheNearTalkerAloneUntouched(block: Int) {
        let scene = Self.scene(seconds: 3, farEnd: false, nearEnd: true)
        let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: block)
        let out = Self.suppress(scene, suppressor: suppressor)
        let a = Self.rate / 2, b = 3 * Self.rate - block
        var cross: Float = 0, inEnergy: Float = 0, outEnergy: Float = 0
        for i in a..<b {
            cross += out[i] * scene.output[i]
            inEnergy += scene.output[i] * scene.output[i]
            outEnergy += out[i] * out[i]
        }
        #expect(cross / (inEnergy * outEnergy).squareRoot() > 0.99)
        #expect(abs(Self.decibels(outEnergy / inEnergy)) < 0.5)
    }

    @Test(arguments: [160, 80]) func comfortNoiseKeepsTheLineAlive(block: Int) {
        let scene = Self.scene(seconds: 4, farEnd: true, nearEnd: false, noiseRMS: 0.003)
        let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: block)
        let out = Self.suppress(scene, suppressor: suppressor)
        let level = Self.decibels(Self.power(out, from: 1, to: 3.9) / Self.power(scene.noise, from: 1, to: 3.9))
        #expect(level > -4 && level < 4, "output \(level) dB relative to the noise")
    }

    /// A talker who talks on through a pause of the far end, for longer than the noise window, over a room at
    /// -60 dBFS; then the far end plays alone. The comfort noise that fills what the suppressor takes off the
    /// far end's blocks must be the room's, not the talker's.
    /// A talker who talks on through a 3 s pause of the far end, longer than the noise window, then the far end
    /// alone over a filter that leaves much of its echo (heavy suppression, so the comfort noise fills most of the
    /// output): that noise must be the room's (-60 dBFS), not the talk's.
    @Test func comfortNoiseAfterATalkIsTheRooms() {
        var scene = Self.scene(seconds: 8, farEnd: true, nearEnd: false, noiseRMS: 0.001)
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        // Speech whose pauses a reverberant room fills: the talker's words over their own tail, 20 dB above the room.
        let words = fixture.speechLike(seconds: 3.5, rms: 0.05, seed: 53)
        let tail = fixture.noise(count: words.count, rms: 0.01, seed: 55)
        let onset = 3 * Self.rate / 2
        for i in (2 * Self.rate)..<(5 * Self.rate) {
            scene.far[i] = 0
            scene.estimate[i] = 0
            scene.microphone[i] = scene.noise[i]
        }
        for i in 0..<words.count { scene.near[onset + i] = words[i] + tail[i] }
        for i in scene.microphone.indices {
            scene.microphone[i] += scene.near[i]
            scene.output[i] = scene.microphone[i] - scene.estimate[i]
        }
        let out = Self.suppress(scene)
        // 10 dB above the room over the first 0.75 s (11.2, 10.1, 7.9 dB per quarter second) while the floor, lifted
        // by the talk, came back down; 0.6-2.3 dB with the floor held through the talk.
        let level = Self.decibels(Self.power(out, from: 5, to: 5.75) / Self.power(scene.noise, from: 5, to: 5.75))
        #expect(level > -4 && level < 4, "output \(level) dB relative to the room for 0.75 s after the talk")
    }

    @Test func processDoesNotAllocate() {
        let scene = Self.scene(seconds: 1, farEnd: true, nearEnd: true)
        // An unoptimised build instantiates generic metadata the first time a path runs (once per process, so
        // whether it lands here depends on which test ran first): a warm-up suppressor takes every path of the
        // scene first.
        _ = Self.suppress(scene)
        let suppressor = ResidualEchoSuppressor(sampleRate: Self.rate, blockFrameCount: Self.block)
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: Self.block)
        defer { scratch.deallocate() }
        scene.output.withUnsafeBufferPointer { o in
            scene.estimate.withUnsafeBufferPointer { y in
                scene.far.withUnsafeBufferPointer { x in
                    // The first block may make the runtime's one-time per-thread allocations; count after it.
                    for start in stride(from: 0, through: o.count - Self.block, by: Self.block) {
                        if start == Self.block { alloc_counter_start() }
                        scratch.baseAddress!.update(from: o.baseAddress! + start, count: Self.block)
                        suppressor.process(output: scratch, echoEstimate: UnsafeBufferPointer(rebasing: y[start..<start + Self.block]),
                                           reference: UnsafeBufferPointer(rebasing: x[start..<start + Self.block]))
                    }
                    #expect(alloc_counter_stop() == 0)
                }
            }
        }
    }
}
