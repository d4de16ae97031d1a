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
        let errors = FFTTests.errors(FFTTests.noise(frameCount, seed: UInt64(frameCount)), binCount: fft.binCount,
                                     forward: fft.forward, inverse: fft.inverse)
        #expect(errors.spectrum < 1e-4)
        #expect(errors.roundTrip < 1e-5)
    }
}
