import Foundation
import Testing
import CAllocCounter
@testable import VoiceIO

@Suite struct FFTTests {
    /// Direct O(N²) DFT in Double, the reference the FFT must match.
    static func directDFT(_ x: [Float]) -> (real: [Double], imaginary: [Double]) {
        let n = x.count
        var re = [Double](repeating: 0, count: n / 2 + 1), im = re
        for k in 0...(n / 2) {
            for (i, v) in x.enumerated() {
                let angle = -2 * Double.pi * Double(k * i % n) / Double(n)
                re[k] += Double(v) * cos(angle)
                im[k] += Double(v) * sin(angle)
            }
        }
        return (re, im)
    }

    static func noise(_ count: Int, seed: UInt64) -> [Float] {
        var state = seed
        return (0..<count).map { _ in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state >> 11) % 2000) / 1000 - 1
        }
    }

    /// A real transform's `forward` and `inverse`, as `RealFFT` and `MixedRadixRealFFT` both have them.
    typealias Forward = (UnsafePointer<Float>, UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) -> Void
    typealias Inverse = (UnsafePointer<Float>, UnsafePointer<Float>, UnsafeMutablePointer<Float>) -> Void

    /// `x` forward (`binCount` bins), then back: the worst bin's error against the direct DFT over √N (about the rms
    /// of a bin of unit-variance noise), and the worst frame's error of the round trip.
    static func errors(_ x: [Float], binCount: Int, forward: Forward, inverse: Inverse)
        -> (spectrum: Double, roundTrip: Float) {
        var re = [Float](repeating: 0, count: binCount), im = re
        var y = [Float](repeating: 0, count: x.count)
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                forward(x, r.baseAddress!, i.baseAddress!)
                y.withUnsafeMutableBufferPointer { inverse(r.baseAddress!, i.baseAddress!, $0.baseAddress!) }
            }
        }
        let reference = directDFT(x)
        var worst = 0.0
        for k in 0..<binCount {
            worst = max(worst, abs(Double(re[k]) - reference.real[k]), abs(Double(im[k]) - reference.imaginary[k]))
        }
        return (worst / Double(x.count).squareRoot(), zip(x, y).map { abs($0 - $1) }.max() ?? 1)
    }

    @Test(arguments: [4, 8, 64, 256, 512, 1024])
    func forwardMatchesDirectDFTAndInverseRestores(frameCount: Int) {
        let fft = RealFFT(frameCount: frameCount)
        let errors = Self.errors(Self.noise(frameCount, seed: UInt64(frameCount)), binCount: fft.binCount,
                                 forward: fft.forward, inverse: fft.inverse)
        #expect(errors.spectrum < 1e-4)
        #expect(errors.roundTrip < 1e-5)
    }

    /// Any bins (not only a real signal's), the imaginary parts of DC and Nyquist set to show they are ignored,
    /// against x[n] = (X₀ + (−1)ⁿ X_{N/2} + 2 Σ Re(X_k e^(2πikn/N))) / N, at sizes where the four-bin packing
    /// has a scalar tail of every length and where it has none.
    @Test(arguments: [4, 8, 16, 32, 64, 512])
    func inverseMatchesDirectInverseDFT(frameCount: Int) {
        let fft = RealFFT(frameCount: frameCount)
        let re = Self.noise(fft.binCount, seed: UInt64(3 * frameCount))
        let im = Self.noise(fft.binCount, seed: UInt64(5 * frameCount))
        var y = [Float](repeating: 0, count: frameCount)
        y.withUnsafeMutableBufferPointer { fft.inverse(real: re, imaginary: im, output: $0.baseAddress!) }
        let half = frameCount / 2
        var worst = 0.0
        for n in 0..<frameCount {
            var sum = Double(re[0]) + (n % 2 == 0 ? 1 : -1) * Double(re[half])
            for k in 1..<half {
                let angle = 2 * Double.pi * Double(k * n % frameCount) / Double(frameCount)
                sum += 2 * (Double(re[k]) * cos(angle) - Double(im[k]) * sin(angle))
            }
            worst = max(worst, abs(sum / Double(frameCount) - Double(y[n])))
        }
        #expect(worst < 1e-5)
    }

    @Test func aSineLandsInItsBin() {
        let fft = RealFFT(frameCount: 512)
        let x = (0..<512).map { Float(cos(2 * Double.pi * 37 * Double($0) / 512)) }
        var re = [Float](repeating: 0, count: fft.binCount), im = re
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in fft.forward(x, real: r.baseAddress!, imaginary: i.baseAddress!) }
        }
        #expect(abs(re[37] - 256) < 1e-3)
        let leakage = (0..<fft.binCount).filter { $0 != 37 }.map { abs(re[$0]) + abs(im[$0]) }.max() ?? 1
        #expect(leakage < 1e-3)
    }

    @Test func transformsDoNotAllocate() {
        let fft = RealFFT(frameCount: 256)
        let x = Self.noise(256, seed: 3)
        let re = UnsafeMutablePointer<Float>.allocate(capacity: fft.binCount)
        let im = UnsafeMutablePointer<Float>.allocate(capacity: fft.binCount)
        let y = UnsafeMutablePointer<Float>.allocate(capacity: 256)
        defer { re.deallocate(); im.deallocate(); y.deallocate() }
        x.withUnsafeBufferPointer { input in
            fft.forward(input.baseAddress!, real: re, imaginary: im)
            alloc_counter_start()
            for _ in 0..<10 {
                fft.forward(input.baseAddress!, real: re, imaginary: im)
                fft.inverse(real: re, imaginary: im, output: y)
            }
            #expect(alloc_counter_stop() == 0)
        }
    }
}
