import Foundation
import Testing
@testable import VoiceIO

/// Comfort noise replacing a fully suppressed signal, synthesised as `ResidualEchoSuppressor` does (sine window of
/// two blocks, zero-padded transform, 50 % overlap-add): its level in time must match the background's.
@Suite struct ComfortNoiseTests {
    static let rate = 16000
    static let block = 160

    /// Tracks `input` block by block and returns what replaces it when every bin is suppressed (gain 0).
    /// `echo`, if given, is the part of `input` the tracker is told is echo (its power spectrum, block by block).
    /// `holdingRise`: the frames (by start frame) in which the floor is told it may not rise.
    static func replaced(_ input: [Float], echo: [Float]? = nil, holdingRise: (Int) -> Bool = { _ in false },
                         windowSeconds: Double = 3) -> [Float] {
        let window = 2 * block, size = 512
        let fft = RealFFT(frameCount: size)
        let noise = ComfortNoise(binCount: fft.binCount, windowFrames: Int(windowSeconds * Double(rate)) / block,
                                 synthesisPowerScale: Float(size) / Float(block))
        let sine = (0..<window).map { Float(sin(Double.pi * (Double($0) + 0.5) / Double(window))) }
        var history = [Float](repeating: 0, count: window), frame = [Float](repeating: 0, count: size)
        var echoHistory = history
        var real = [Float](repeating: 0, count: fft.binCount), imaginary = real, power = real, echoPower = real
        let gains = [Float](repeating: 0, count: fft.binCount)
        var overlap = [Float](repeating: 0, count: block), out: [Float] = []
        for start in stride(from: 0, through: input.count - block, by: block) {
            history = Array(history[block...]) + input[start..<start + block]
            for i in 0..<size { frame[i] = i < window ? history[i] * sine[i] : 0 }
            fft.forward(frame, real: &real, imaginary: &imaginary)
            for k in 0..<fft.binCount { power[k] = real[k] * real[k] + imaginary[k] * imaginary[k] }
            if let echo {
                echoHistory = Array(echoHistory[block...]) + echo[start..<start + block]
                for i in 0..<size { frame[i] = i < window ? echoHistory[i] * sine[i] : 0 }
                fft.forward(frame, real: &real, imaginary: &imaginary)
                for k in 0..<fft.binCount { echoPower[k] = real[k] * real[k] + imaginary[k] * imaginary[k] }
                noise.track(power: power, echo: echoPower, holdsRise: holdingRise(start))
            } else {
                noise.track(power: power, holdsRise: holdingRise(start))
            }
            for k in 0..<fft.binCount { real[k] = 0; imaginary[k] = 0 }
            noise.add(toReal: &real, imaginary: &imaginary, gains: gains)
            fft.inverse(real: real, imaginary: imaginary, output: &frame)
            for i in 0..<block {
                out.append(overlap[i] + frame[i] * sine[i])
                overlap[i] = frame[block + i] * sine[block + i]
            }
        }
        return out
    }

    static func levelDB(_ x: [Float], from: Double, to: Double) -> Double {
        let slice = x[Int(from * Double(rate))..<min(x.count, Int(to * Double(rate)))]
        return 10 * log10(slice.reduce(0) { $0 + Double($1 * $1) } / Double(slice.count))
    }

    @Test("synthesised noise has the background's level (white noise, -50 dBFS)")
    func levelMatchesTheBackground() {
        let input = EchoSceneFixture(sampleRate: Self.rate).noise(count: 10 * Self.rate, rms: 0.003, seed: 5)
        let out = Self.replaced(input)
        let difference = Self.levelDB(out, from: 4, to: 10) - Self.levelDB(input, from: 4, to: 10)
        // Before the synthesis scale the noise came out 5 dB low.
        #expect(abs(difference) < 1, "comfort noise \(difference) dB from the background")
    }

    @Test("a silent start and a louder room are followed within one window")
    func followsTheRoom() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let quiet = fixture.noise(count: 6 * Self.rate, rms: 0.001, seed: 6)
        let loud = fixture.noise(count: 6 * Self.rate, rms: 0.01, seed: 7)
        let input = [Float](repeating: 0, count: Self.rate) + quiet + loud
        let out = Self.replaced(input)
        // The device's silent first second is forgotten by 4.5 s (a minimum that only rose 1 dB/s was not).
        let afterSilence = Self.levelDB(out, from: 4.5, to: 7) - Self.levelDB(input, from: 4.5, to: 7)
        #expect(abs(afterSilence) < 1.5, "comfort noise \(afterSilence) dB from the background after a silent start")
        // 20 dB louder from 7 s: followed by 10.5 s.
        let afterRise = Self.levelDB(out, from: 10.5, to: 13) - Self.levelDB(input, from: 10.5, to: 13)
        #expect(abs(afterRise) < 1.5, "comfort noise \(afterRise) dB from the background after the room got louder")
    }

    @Test("echo that lasts longer than the window does not become the floor; the room still does")
    func echoIsNotTheBackground() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        // A -60 dBFS room; from 5 s to 11 s echo 30 dB louder that never pauses (a filter that has not converged
        // under a far end that talks on); from 11 s the room itself 20 dB louder.
        let room = fixture.noise(count: 11 * Self.rate, rms: 0.001, seed: 8)
            + fixture.noise(count: 5 * Self.rate, rms: 0.01, seed: 9)
        var echo = [Float](repeating: 0, count: room.count)
        let loud = fixture.noise(count: 6 * Self.rate, rms: 0.03, seed: 10)
        for i in 0..<loud.count { echo[5 * Self.rate + i] = loud[i] }
        let input = zip(room, echo).map { $0 + $1 }
        let told = Self.replaced(input, echo: echo)
        let duringEcho = Self.levelDB(told, from: 8.5, to: 11) - Self.levelDB(room, from: 8.5, to: 11)
        #expect(abs(duringEcho) < 1.5, "comfort noise \(duringEcho) dB from the room under lasting echo")
        let afterRise = Self.levelDB(told, from: 14.5, to: 16) - Self.levelDB(room, from: 14.5, to: 16)
        #expect(abs(afterRise) < 1.5, "comfort noise \(afterRise) dB from the room after it got louder")
        // Control: not told, the tracker takes the echo for the room once the echo fills its window.
        let untold = Self.replaced(input)
        let untoldDuringEcho = Self.levelDB(untold, from: 8.5, to: 11) - Self.levelDB(room, from: 8.5, to: 11)
        #expect(untoldDuringEcho > 20, "without the echo the floor rose only \(untoldDuringEcho) dB")
    }

    @Test("a talker heard over the far end for longer than the window does not become the floor")
    func talkerIsNotTheBackground() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        // A -60 dBFS room; from 5 s to 11 s a talker 30 dB louder who never pauses, heard in double talk.
        var input = fixture.noise(count: 12 * Self.rate, rms: 0.001, seed: 11)
        let talker = fixture.noise(count: 6 * Self.rate, rms: 0.03, seed: 12)
        for i in 0..<talker.count { input[5 * Self.rate + i] += talker[i] }
        let held = Self.replaced(input, holdingRise: { $0 >= 5 * Self.rate && $0 < 11 * Self.rate })
        let duringTalk = Self.levelDB(held, from: 8.5, to: 11) - Self.levelDB(input, from: 3, to: 5)
        #expect(abs(duringTalk) < 1.5, "comfort noise \(duringTalk) dB from the room under a talker")
        // Control: not held, the floor becomes the talker once it fills the window.
        let untold = Self.replaced(input)
        let untoldDuringTalk = Self.levelDB(untold, from: 8.5, to: 11) - Self.levelDB(input, from: 3, to: 5)
        #expect(untoldDuringTalk > 20, "without the hold the floor rose only \(untoldDuringTalk) dB")
    }
}

extension ComfortNoiseTests {
    /// A room 20 dB louder from 2 s (power 1e-6 -> 1e-4), both floors told from 1.5 s on that a talker may be
    /// talking, the background's hold lifted: the background follows the room within a window, the generated noise
    /// stays at the quiet room's level; with the same hold for both they are one floor.
    @Test func theBackgroundFloorRisesWhereTheGeneratedOneIsHeld() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let input = fixture.noise(count: 2 * Self.rate, rms: 0.001, seed: 8)
            + fixture.noise(count: 4 * Self.rate, rms: 0.01, seed: 9)
        func floors(backgroundHoldsRise: Bool?) -> (noise: Float, background: Float) {
            let noise = ComfortNoise(binCount: 9, windowFrames: 150)
            var power = [Float](repeating: 0, count: 9)
            for start in stride(from: 0, through: input.count - Self.block, by: Self.block) {
                let mean = input[start..<start + Self.block].reduce(0) { $0 + $1 * $1 } / Float(Self.block)
                for k in power.indices { power[k] = mean }
                let held = start >= 3 * Self.rate / 2
                noise.track(power: power, holdsRise: held, backgroundHoldsRise: backgroundHoldsRise.map { $0 && held })
            }
            return (noise.noisePower[4], noise.backgroundPower[4])
        }
        let split = floors(backgroundHoldsRise: false), same = floors(backgroundHoldsRise: nil)
        #expect(split.noise > 1e-6 && split.noise < 1e-5, "generated floor \(split.noise)")
        #expect(split.background > 3e-5, "background floor \(split.background)")
        #expect(same.background == same.noise && same.noise == split.noise)
    }

    /// The far end's echo from the very first frame (a call's first 5 ms block after the resampler's start): the start
    /// frames' mean sets both floors, and the echo, above them from then on, holds them there, neither at zero nor at
    /// the echo. Held from zero, both floors stayed at zero (the public pump scene m06 at 5 ms blocks: digital
    /// silence); taken from one frame times the minimum's bias, they stood 4.4 dB over the room.
    @Test func theStartFramesSetTheFloorUnderEcho() {
        let noise = ComfortNoise(binCount: 4, windowFrames: 150, startFrames: 4)
        let echo = [Float](repeating: 1e-3, count: 4)
        for frame in 0..<100 {
            // The room's power read 1e-6 and 3e-6 in turn (a frame's power scatters about the room's mean of 2e-6).
            let room = [Float](repeating: frame % 2 == 0 ? 1e-6 : 3e-6, count: 4)
            noise.track(power: room, echo: echo)
        }
        for k in 0..<4 {
            #expect(abs(noise.noisePower[k] / 2e-6 - 1) < 0.01, "floor \(noise.noisePower[k])")
            #expect(noise.backgroundPower[k] == noise.noisePower[k])
        }
    }

    /// The echo back within the start frames (a PulseAudio null sink's loopback, 30 ms late: the third 10 ms frame)
    /// at 30 dB over the room: the floors are the mean of the two frames before it, and the echo holds them there.
    /// Counted in, the start's mean was the echo's, and the floors fell to the two frames' minimum times the minimum's
    /// bias: 1.4 dB over the room here (4 dB on quiet-pump z04's background, the line 3.5 dB louder while the far end
    /// talked than in the quiet).
    @Test func anEchoBackWithinTheStartEndsIt() {
        let noise = ComfortNoise(binCount: 4, windowFrames: 150, startFrames: 4)
        let echo = [Float](repeating: 2e-3, count: 4)
        for frame in 0..<100 {
            let room = [Float](repeating: frame % 2 == 0 ? 1e-6 : 3e-6, count: 4)
            if frame < 2 {
                noise.track(power: room, echo: [Float](repeating: 0, count: 4))
            } else {
                noise.track(power: room.map { $0 + 2e-3 }, echo: echo)
            }
        }
        for k in 0..<4 {
            #expect(abs(noise.noisePower[k] / 2e-6 - 1) < 0.01, "generated floor \(noise.noisePower[k])")
            #expect(noise.backgroundPower[k] == noise.noisePower[k])
        }
    }

    /// A room 6 dB louder once the far end talks, its echo 4.4 dB under the floor (a reverberant room's leftover that
    /// the caller's estimate puts just under the floor): the generated floor holds, the background floor the detector
    /// reads follows the room.
    @Test func echoJustUnderTheGeneratedFloorHoldsIt() {
        let noise = ComfortNoise(binCount: 4, windowFrames: 60)
        let quiet = [Float](repeating: 1e-6, count: 4), louder = [Float](repeating: 4e-6, count: 4)
        let echo = [Float](repeating: 1e-6, count: 4)
        for _ in 0..<100 { noise.track(power: quiet) }
        let settled = noise.noisePower[0]
        for _ in 0..<200 { noise.track(power: louder, echo: echo) }
        for k in 0..<4 {
            #expect(settled > 2e-6 && noise.noisePower[k] == settled, "generated floor \(noise.noisePower[k])")
            #expect(noise.backgroundPower[k] > 4e-6, "background floor \(noise.backgroundPower[k])")
        }
    }

    /// A stream that starts with a device's zeros, then the far end's echo over a room, the echo estimate over the
    /// frames' power (a pessimistic one, as the suppressor's is): for the first sub-window (the half second the filter
    /// takes to learn the echo) the floors stay at zero, then they take the minimum of the power since the zeros,
    /// without its bias, and do not rise with louder sound under the echo (a hall's leftover), and once the echo falls
    /// under them they are tracked as before (the minimum times its bias).
    /// Held at zero under the echo, the line was digital silence while the far end talked on (the public pump scenes
    /// with 0.1-1 s of zeros at the stream's start, the far end talking from it: a second or more in 14 of 15 runs).
    @Test func afterZerosUnderEchoTheFloorsFollowTheMinimum() {
        let noise = ComfortNoise(binCount: 4, windowFrames: 60)
        for _ in 0..<10 { noise.track(power: [Float](repeating: 0, count: 4)) }
        let room = [Float](repeating: 5e-6, count: 4)
        let echo = [Float](repeating: 1e-5, count: 4)
        for _ in 0..<5 { noise.track(power: room, echo: echo) }
        #expect(noise.noisePower[0] == 0 && noise.backgroundPower[0] == 0, "floors within the first sub-window")
        for _ in 0..<200 { noise.track(power: room, echo: echo) }
        for k in 0..<4 {
            #expect(abs(noise.noisePower[k] / 5e-6 - 1) < 0.01, "generated floor under the echo \(noise.noisePower[k])")
            #expect(abs(noise.backgroundPower[k] / 5e-6 - 1) < 0.01, "background floor \(noise.backgroundPower[k])")
        }
        for _ in 0..<200 { noise.track(power: echo, echo: echo) }
        #expect(abs(noise.noisePower[0] / 5e-6 - 1) < 0.01, "floor under louder sound \(noise.noisePower[0])")
        let quiet = [Float](repeating: 1e-8, count: 4)
        for _ in 0..<200 { noise.track(power: room, echo: quiet) }
        for k in 0..<4 {
            // The minimum's bias (4.4 dB) counts again once the echo has left.
            #expect(abs(noise.noisePower[k] / 5e-6 - 2.75) < 0.03, "floor after the echo \(noise.noisePower[k])")
        }
    }

    /// A device's zeros (a late start, a stall), then the room while the far end is silent, whose first sound after
    /// them is taken for a talker (the generated floor held, not the background's), then the far end's echo, which
    /// explains the frame's power: the floors are the mean of the room's first frames, as at a stream's start, and
    /// the echo holds them there. The first frame after the zeros, whose window still holds some, reads a quarter of
    /// the room and is not one of them. With the zeros in the window, the floors stayed at zero, held by the talker
    /// and then by the echo: the line was digital silence for 2-7 s of the far end's talk (quiet-pump z01, z04, z05
    /// with 0.1-1 s of zeros before 0.3-1.2 s of the room and the far end's first words).
    @Test(arguments: [0, 200])
    func theRoomAfterZerosStartsTheFloor(roomFramesBeforeZeros: Int) {
        let noise = ComfortNoise(binCount: 4, windowFrames: 60, startFrames: 4)
        func room(_ frame: Int) -> [Float] { [Float](repeating: frame % 2 == 0 ? 1e-6 : 3e-6, count: 4) }
        for frame in 0..<roomFramesBeforeZeros { noise.track(power: room(frame)) }
        for _ in 0..<20 { noise.track(power: [Float](repeating: 0, count: 4)) }
        noise.track(power: [Float](repeating: 5e-7, count: 4), holdsRise: true, backgroundHoldsRise: false)
        for frame in 0..<30 { noise.track(power: room(frame), holdsRise: true, backgroundHoldsRise: false) }
        let echo = [Float](repeating: 1e-4, count: 4)
        for frame in 0..<200 { noise.track(power: room(frame).map { $0 + 1e-4 }, echo: echo) }
        for k in 0..<4 {
            #expect(abs(noise.noisePower[k] / 2e-6 - 1) < 0.01, "generated floor \(noise.noisePower[k])")
            // Not held by the talker, the background's floor took the minimum over the room's frames.
            #expect(abs(noise.backgroundPower[k] / 2e-6 - 1) < 0.5, "background floor \(noise.backgroundPower[k])")
        }
    }
}
