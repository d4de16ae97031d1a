import Foundation
import Testing
@testable import VoiceIO

@Suite struct ResidualPathKalmanTests {
    /// Bins and frames of the synthetic spectra: two groups of four bins, a path over eight frames.
    static let laneBinCount = 8, frameCount = 8

    /// Complex spectra per frame for every bin: a reference whose frames are correlated as speech's are (each frame 0.9
    /// of the last plus new sound), a leftover through a fixed random path, and an independent talker.
    struct Scene {
        var seed: UInt64
        var referenceReal = [[Float]](), referenceImaginary = [[Float]]()
        var pathReal = [[Float]](), pathImaginary = [[Float]]()

        init(seed: UInt64, frames: Int, pathFrames: Int = ResidualPathKalmanTests.frameCount) {
            self.seed = seed
            let n = ResidualPathKalmanTests.laneBinCount, m = pathFrames
            var lastReal = [Float](repeating: 0, count: n), lastImaginary = [Float](repeating: 0, count: n)
            for _ in 0..<frames {
                lastReal = lastReal.map { 0.9 * $0 + nextGaussian() }
                lastImaginary = lastImaginary.map { 0.9 * $0 + nextGaussian() }
                referenceReal.append(lastReal); referenceImaginary.append(lastImaginary)
            }
            // The path decays over its frames, as a room's does; its power (0.013 over the frames) about what the
            // filter's prior expects of a leftover (`initialVariance` per frame).
            for j in 0..<m {
                let scale = 0.05 / Float(j + 1).squareRoot()
                pathReal.append((0..<n).map { _ in scale * nextGaussian() })
                pathImaginary.append((0..<n).map { _ in scale * nextGaussian() })
            }
        }

        /// A deterministic standard normal draw (xorshift and Box-Muller): the same scene on every run.
        mutating func nextGaussian() -> Float {
            func uniform() -> Float {
                seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17
                return (Float(seed >> 40) + 0.5) / Float(1 << 24)
            }
            let radius = (-2 * log(uniform())).squareRoot()
            return radius * cos(2 * Float.pi * uniform())
        }

        /// The leftover at `frame`: Σⱼ path_j · reference(frame − j), per bin.
        func leftover(at frame: Int) -> (real: [Float], imaginary: [Float]) {
            var real = [Float](repeating: 0, count: referenceReal[0].count), imaginary = real
            for j in 0..<pathReal.count where frame - j >= 0 {
                for k in real.indices {
                    let xr = referenceReal[frame - j][k], xi = referenceImaginary[frame - j][k]
                    real[k] += pathReal[j][k] * xr - pathImaginary[j][k] * xi
                    imaginary[k] += pathReal[j][k] * xi + pathImaginary[j][k] * xr
                }
            }
            return (real, imaginary)
        }
    }

    /// Runs `frames` frames of leftover through a path of `pathFrames` (plus a talker `talkerScale` times a unit normal
    /// per bin) through the filter, grown before frame `growAt`, and returns, per frame, the leftover's power in `bins`
    /// and the power of what the filter left of it there (the cleaned output minus the talker).
    static func run(seed: UInt64, frames: Int, talkerScale: Float, resetAt: Int? = nil,
                    pathFrames: Int = frameCount, growth: ResidualPathKalman.Growth? = nil, growAt: Int? = nil,
                    bins: Range<Int> = 0..<laneBinCount) -> [(leftover: Float, left: Float)] {
        var scene = Scene(seed: seed, frames: frames, pathFrames: pathFrames)
        let filter = ResidualPathKalman(laneBinCount: laneBinCount, frameCount: frameCount, leak: 0.99, growth: growth)
        let real = UnsafeMutablePointer<Float>.allocate(capacity: laneBinCount)
        let imaginary = UnsafeMutablePointer<Float>.allocate(capacity: laneBinCount)
        defer { real.deallocate(); imaginary.deallocate() }
        var powers = [(leftover: Float, left: Float)]()
        for frame in 0..<frames {
            if frame == resetAt { filter.reset() }
            if frame == growAt { filter.grow() }
            scene.referenceReal[frame].withUnsafeBufferPointer { x in
                scene.referenceImaginary[frame].withUnsafeBufferPointer { y in
                    filter.add(referenceReal: UnsafeMutablePointer(mutating: x.baseAddress!),
                               referenceImaginary: UnsafeMutablePointer(mutating: y.baseAddress!))
                }
            }
            let (leftReal, leftImaginary) = scene.leftover(at: frame)
            var talkerReal = [Float](), talkerImaginary = [Float]()
            for k in 0..<laneBinCount {
                talkerReal.append(talkerScale * scene.nextGaussian())
                talkerImaginary.append(talkerScale * scene.nextGaussian())
                real[k] = leftReal[k] + talkerReal[k]
                imaginary[k] = leftImaginary[k] + talkerImaginary[k]
            }
            filter.cancel(outputReal: real, outputImaginary: imaginary)
            var leftover: Float = 0, left: Float = 0
            for k in bins {
                leftover += leftReal[k] * leftReal[k] + leftImaginary[k] * leftImaginary[k]
                let r = filter.cleanedReal[k] - talkerReal[k], i = filter.cleanedImaginary[k] - talkerImaginary[k]
                left += r * r + i * i
            }
            powers.append((leftover, left))
        }
        return powers
    }

    /// What the filter took off a stretch of frames, in dB.
    static func reductionDB(_ powers: ArraySlice<(leftover: Float, left: Float)>) -> Float {
        10 * log10(powers.map(\.leftover).reduce(0, +) / max(powers.map(\.left).reduce(0, +), 1e-30))
    }

    /// Seeds 11, 12, 13 took 13.3, 17.0, 10.9 dB off over the first 20 frames, 26.2, 27.7, 23.7 over frames 20-40 and
    /// 25-30 from there on (the leak toward zero bounds it).
    @Test("a leftover through an eight-frame path is learned within 20 frames, though the reference's frames correlate")
    func learnsTheLeftoverFast() {
        for seed: UInt64 in [11, 12, 13] {
            let powers = Self.run(seed: seed, frames: 120, talkerScale: 0.001)
            // The first frame is cancelled by the estimate of a filter that has learned nothing.
            #expect(abs(Self.reductionDB(powers[0..<1])) < 0.01)
            #expect(Self.reductionDB(powers[20..<120]) > 18, "seed \(seed)")
        }
    }

    /// Seeds 21, 22, 23 took 9.3-10.3 dB off over frames 200-400: what a second of memory (the leak) can learn of an
    /// eight-frame path under that much noise. A filter that learned the talker would leave it in what it left.
    @Test("under a talker as loud as the leftover the leftover is still learned, and the talker is not")
    func keepsTheTalker() {
        for seed: UInt64 in [21, 22, 23] {
            // The talker's power per bin (2 × 0.27²) about the leftover's.
            let powers = Self.run(seed: seed, frames: 400, talkerScale: 0.27)
            #expect(Self.reductionDB(powers[200..<400]) > 6, "seed \(seed)")
        }
    }

    @Test("after a reset the filter takes nothing off until it learns again")
    func resetForgets() {
        let powers = Self.run(seed: 31, frames: 120, talkerScale: 0.001, resetAt: 100)
        #expect(Self.reductionDB(powers[90..<100]) > 18)
        // The reset's frame is cancelled by an estimate of zero: the leftover passes whole.
        #expect(abs(Self.reductionDB(powers[100..<101])) < 0.01)
    }

    /// A 16-frame path, a fifth of its power past the filter's eight frames, the filter grown at frame 60. Seeds 41,
    /// 42, 43 over frames 150-300: grown to 16 frames, the low group took 23.6, 21.4, 21.1 dB off; not grown, 12.5, 8.1,
    /// 8.7 dB (the frames past its span are left, but for what the correlated reference lets the eight frames predict
    /// of them); the high group, which the growth leaves at eight frames, 10.9, 12.5, 11.7 dB either way. Over the 20
    /// frames after the growth the low group took 13.6, 9.4, 11.9 dB off grown, 9.3, 5.4, 8.6 not: what it had learned
    /// moved with it to the grown layout (left where it was, −12.7 to −20.9 dB over frames 150-300).
    @Test("grown, the low bins' filters learn a path longer than the start's span, and the high bins' stay as they were")
    func growsTheLowBinsSpan() {
        let growth = ResidualPathKalman.Growth(frameCount: 16, binCount: 4, leak: 0.99)
        for seed: UInt64 in [41, 42, 43] {
            func reduction(grows: Bool, bins: Range<Int>, frames: Range<Int>) -> Float {
                Self.reductionDB(Self.run(seed: seed, frames: 300, talkerScale: 0.001, pathFrames: 16, growth: growth,
                                          growAt: grows ? 60 : nil, bins: bins)[frames])
            }
            let grownLow = reduction(grows: true, bins: 0..<4, frames: 150..<300)
            let heldLow = reduction(grows: false, bins: 0..<4, frames: 150..<300)
            let grownHigh = reduction(grows: true, bins: 4..<8, frames: 150..<300)
            let heldHigh = reduction(grows: false, bins: 4..<8, frames: 150..<300)
            let grownAfter = reduction(grows: true, bins: 0..<4, frames: 60..<80)
            let heldAfter = reduction(grows: false, bins: 0..<4, frames: 60..<80)
            #expect(grownLow > 17, "seed \(seed)")
            #expect(grownLow > heldLow + 6, "seed \(seed)")
            #expect(abs(grownHigh - heldHigh) < 0.01, "seed \(seed)")
            #expect(grownAfter > heldAfter - 1, "seed \(seed)")
        }
    }
}
