import Testing
@testable import VoiceIO

/// The echo canceller's transform over two blocks, against the direct DFT `FFTTests` checks `RealFFT` with.
@Suite struct MixedRadixRealFFTTests {
    /// 2 × 10 ms blocks at 8, 11.025, 16, 44.1 and 48 kHz (radix 4, 2, 5, 3, 7, 11 passes), a power of two, and
    /// lengths whose radix-4, 2 and 5 passes run one butterfly at a time (stride below four; 240: a first radix-4
    /// pass of 30 butterflies; 100; 8: a single butterfly).
    @Test(arguments: [160, 220, 320, 882, 960, 256, 46, 240, 100, 8])
    func forwardMatchesDirectDFTAndInverseRestores(frameCount: Int) {
        let fft = MixedRadixRealFFT(frameCount: frameCount)
        let x = FFTTests.noise(frameCount, seed: UInt64(frameCount))
        var re = [Float](repeating: 0, count: fft.binCount), im = re
        var y = [Float](repeating: 0, count: frameCount)
        re.withUnsafeMutableBufferPointer { r in
            im.withUnsafeMutableBufferPointer { i in
                fft.forward(x, real: r.baseAddress!, imaginary: i.baseAddress!)
                y.withUnsafeMutableBufferPointer { fft.inverse(real: r.baseAddress!, imaginary: i.baseAddress!, output: $0.baseAddress!) }
            }
        }
        let reference = FFTTests.directDFT(x)
        var worst = 0.0
        for k in 0..<fft.binCount {
            worst = max(worst, abs(Double(re[k]) - reference.real[k]), abs(Double(im[k]) - reference.imaginary[k]))
        }
        #expect(worst / Double(frameCount).squareRoot() < 1e-4)
        #expect((zip(x, y).map { abs($0 - $1) }.max() ?? 1) < 1e-5)
    }
}
