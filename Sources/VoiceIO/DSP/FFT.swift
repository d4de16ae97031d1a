import Foundation

/// Fast Fourier transform of a real signal whose length is a power of two (4 ... 2^20 frames).
///
/// `forward` computes the first `binCount = frameCount / 2 + 1` bins of X[k] = Σ x[n] e^(−2πikn/N)
/// (no scaling); `inverse` takes those bins back to N real frames and divides by N, so
/// `inverse(forward(x)) == x`. Internally an N/2-point complex radix-2 transform runs on the even/odd
/// frames packed as real/imaginary parts, then one split pass separates the two halves.
///
/// `init` allocates the twiddle tables, the bit-reversal table and the scratch once and is not real-time
/// safe. `forward` and `inverse` are real-time safe: no allocation, no locks. One instance is not
/// reentrant (it owns its scratch): give each thread its own.
public final class RealFFT {
    /// N: real frames per transform.
    public let frameCount: Int
    /// N / 2 + 1: complex bins from DC to Nyquist.
    public var binCount: Int { frameCount / 2 + 1 }

    private let halfCount: Int
    /// e^(−2πij/(N/2)) for j in 0 ..< N/4: the complex transform's twiddles.
    private let butterflyCos: UnsafeMutablePointer<Float>
    private let butterflySin: UnsafeMutablePointer<Float>
    /// e^(−2πik/N) for k in 0 ... N/2: the split pass's twiddles.
    private let splitCos: UnsafeMutablePointer<Float>
    private let splitSin: UnsafeMutablePointer<Float>
    private let bitReversed: UnsafeMutablePointer<Int32>
    private let scratchReal: UnsafeMutablePointer<Float>
    private let scratchImaginary: UnsafeMutablePointer<Float>

    /// Prepares a transform of `frameCount` real frames, a power of two from 4 to 2^20. Not real-time safe.
    public init(frameCount: Int) {
        precondition(frameCount >= 4 && frameCount <= 1 << 20 && frameCount & (frameCount - 1) == 0,
                     "RealFFT frameCount must be a power of two in 4 ... 2^20")
        self.frameCount = frameCount
        halfCount = frameCount / 2
        let quarter = max(1, frameCount / 4)
        butterflyCos = .allocate(capacity: quarter)
        butterflySin = .allocate(capacity: quarter)
        for j in 0..<quarter {
            let angle = -2.0 * Double.pi * Double(j) / Double(halfCount)
            butterflyCos[j] = Float(cos(angle))
            butterflySin[j] = Float(sin(angle))
        }
        splitCos = .allocate(capacity: halfCount + 1)
        splitSin = .allocate(capacity: halfCount + 1)
        for k in 0...halfCount {
            let angle = -2.0 * Double.pi * Double(k) / Double(frameCount)
            splitCos[k] = Float(cos(angle))
            splitSin[k] = Float(sin(angle))
        }
        bitReversed = .allocate(capacity: halfCount)
        var bits = 0
        while 1 << bits < halfCount { bits += 1 }
        for i in 0..<halfCount {
            var reversed = 0
            for b in 0..<bits where i & (1 << b) != 0 { reversed |= 1 << (bits - 1 - b) }
            bitReversed[i] = Int32(reversed)
        }
        scratchReal = .allocate(capacity: halfCount)
        scratchImaginary = .allocate(capacity: halfCount)
    }

    deinit {
        butterflyCos.deallocate()
        butterflySin.deallocate()
        splitCos.deallocate()
        splitSin.deallocate()
        bitReversed.deallocate()
        scratchReal.deallocate()
        scratchImaginary.deallocate()
    }

    /// Spectrum of `input` (`frameCount` frames) into `real` and `imaginary` (`binCount` each).
    /// Input and output may not overlap. Real-time safe.
    public func forward(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>,
                        imaginary: UnsafeMutablePointer<Float>) {
        let re = scratchReal, im = scratchImaginary
        for i in 0..<halfCount {
            let j = Int(bitReversed[i])
            re[j] = input[2 * i]
            im[j] = input[2 * i + 1]
        }
        butterflies()
        // Even frames' spectrum Fe = (Z[k] + conj Z[N/2−k]) / 2, odd frames' Fo = (Z[k] − conj Z[N/2−k]) / 2i,
        // and X[k] = Fe[k] + e^(−2πik/N) Fo[k].
        for k in 0...halfCount {
            let a = k == halfCount ? 0 : k
            let b = k == 0 ? 0 : halfCount - k
            let evenRe = 0.5 * (re[a] + re[b]), evenIm = 0.5 * (im[a] - im[b])
            let oddRe = 0.5 * (im[a] + im[b]), oddIm = -0.5 * (re[a] - re[b])
            let c = splitCos[k], s = splitSin[k]
            real[k] = evenRe + c * oddRe - s * oddIm
            imaginary[k] = evenIm + c * oddIm + s * oddRe
        }
    }

    /// `frameCount` real frames into `output` from `binCount` bins of `real` and `imaginary` (the imaginary
    /// parts of DC and Nyquist are ignored), divided by `frameCount`. Real-time safe.
    public func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>,
                        output: UnsafeMutablePointer<Float>) {
        let re = scratchReal, im = scratchImaginary
        // Z[k] = Fe[k] + i Fo[k] with Fe = X[k] + conj X[N/2−k] and Fo = (X[k] − conj X[N/2−k]) e^(+2πik/N),
        // conjugated so that the forward butterflies compute the inverse transform.
        for k in 0..<halfCount {
            let m = halfCount - k
            let xr = real[k], xi = k == 0 ? 0 : imaginary[k]
            let yr = real[m], yi = m == halfCount ? 0 : -imaginary[m]
            let evenRe = xr + yr, evenIm = xi + yi
            let dRe = xr - yr, dIm = xi - yi
            let c = splitCos[k], s = -splitSin[k]
            let oddRe = dRe * c - dIm * s, oddIm = dRe * s + dIm * c
            let j = Int(bitReversed[k])
            re[j] = evenRe - oddIm
            im[j] = -(evenIm + oddRe)
        }
        butterflies()
        let scale = 1 / Float(frameCount)
        for i in 0..<halfCount {
            output[2 * i] = re[i] * scale
            output[2 * i + 1] = -im[i] * scale
        }
    }

    /// In-place iterative radix-2 decimation-in-time butterflies on bit-reversed scratch.
    private func butterflies() {
        // Locals and while loops: the same code optimised, and far fewer calls unoptimised (debug builds).
        let re = scratchReal, im = scratchImaginary, cosines = butterflyCos, sines = butterflySin
        let count = halfCount
        var span = 1
        var twiddleStride = count / 2
        while span < count {
            var start = 0
            while start < count {
                var t = 0
                var i = start
                while i < start + span {
                    let c = cosines[t], s = sines[t]
                    let j = i + span
                    let tr = re[j] * c - im[j] * s
                    let ti = re[j] * s + im[j] * c
                    re[j] = re[i] - tr
                    im[j] = im[i] - ti
                    re[i] += tr
                    im[i] += ti
                    t += twiddleStride
                    i += 1
                }
                start += 2 * span
            }
            span *= 2
            twiddleStride /= 2
        }
    }
}
