import Glibc

/// Fast Fourier transform of a real signal whose length is a power of two (4 ... 2^20 frames).
///
/// `forward` computes the first `binCount = frameCount / 2 + 1` bins of X[k] = Σ x[n] e^(−2πikn/N)
/// (no scaling); `inverse` takes those bins back to N real frames and divides by N, so
/// `inverse(forward(x)) == x`. Internally an N/2-point complex radix-2 transform runs on the even/odd
/// frames packed as real/imaginary parts, then one split pass separates the two halves. The butterflies run on
/// SIMD4 lanes from the third stage on, two stages per pass over the data.
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
    /// The complex transform's twiddles stage by stage: for the stage of span s (4, 8, ..., N/4), e^(−πit/s)
    /// for t in 0 ..< s at offset s − 1, so that each stage reads them contiguously.
    private let stageCos: UnsafeMutablePointer<Float>
    private let stageSin: UnsafeMutablePointer<Float>
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
        stageCos = .allocate(capacity: halfCount)
        stageSin = .allocate(capacity: halfCount)
        var span = 1
        while span < halfCount {
            for t in 0..<span {
                let angle = -Double.pi * Double(t) / Double(span)
                stageCos[span - 1 + t] = Float(cos(angle))
                stageSin[span - 1 + t] = Float(sin(angle))
            }
            span *= 2
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
        stageCos.deallocate()
        stageSin.deallocate()
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
        // Bit reversal is its own inverse: scratch slot p takes complex input frame bitReversed[p].
        loadBitReversed(real: input, imaginary: input + 1, stride: 2)
        butterflies()
        // Even frames' spectrum Fe = (Z[k] + conj Z[N/2−k]) / 2, odd frames' Fo = (Z[k] − conj Z[N/2−k]) / 2i,
        // and X[k] = Fe[k] + e^(−2πik/N) Fo[k]: four bins at a time (Z[N/2−k] read backwards), the ends one by one.
        split(bin: 0)
        var k = 1
        while k + 4 <= halfCount {
            let b = halfCount - k - 3
            let ar = load(re + k), ai = load(im + k)
            let br = load(re + b).reversed, bi = load(im + b).reversed
            let evenRe = 0.5 * (ar + br), evenIm = 0.5 * (ai - bi)
            let oddRe = 0.5 * (ai + bi), oddIm = -0.5 * (ar - br)
            let c = load(splitCos + k), s = load(splitSin + k)
            store(evenRe + c * oddRe - s * oddIm, real + k)
            store(evenIm + c * oddIm + s * oddRe, imaginary + k)
            k += 4
        }
        while k <= halfCount {
            split(bin: k)
            k += 1
        }

        @inline(__always) func split(bin k: Int) {
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
    /// parts of DC and Nyquist are ignored), divided by `frameCount`. `output` is also the working space for the
    /// packed spectrum, so it may not overlap the bins. Real-time safe.
    public func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>,
                        output: UnsafeMutablePointer<Float>) {
        let re = scratchReal, im = scratchImaginary
        // Z[k] = Fe[k] + i Fo[k] with Fe = X[k] + conj X[N/2−k] and Fo = (X[k] − conj X[N/2−k]) e^(+2πik/N),
        // conjugated so that the forward butterflies compute the inverse transform: real parts into the first half
        // of `output`, imaginary parts into the second, four bins at a time (X[N/2−k] read backwards), then into
        // the scratch in bit-reversed order.
        let packedReal = output, packedImaginary = output + halfCount
        pack(bin: 0)
        var k = 1
        while k + 4 <= halfCount {
            let b = halfCount - k - 3
            let xr = load(real + k), xi = load(imaginary + k)
            let yr = load(real + b).reversed, yi = -load(imaginary + b).reversed
            let evenRe = xr + yr, evenIm = xi + yi
            let dRe = xr - yr, dIm = xi - yi
            let c = load(splitCos + k), s = -load(splitSin + k)
            let oddRe = dRe * c - dIm * s, oddIm = dRe * s + dIm * c
            store(evenRe - oddIm, packedReal + k)
            store(-(evenIm + oddRe), packedImaginary + k)
            k += 4
        }
        while k < halfCount {
            pack(bin: k)
            k += 1
        }
        loadBitReversed(real: packedReal, imaginary: packedImaginary, stride: 1)
        butterflies()
        let scale = 1 / Float(frameCount)
        for i in 0..<halfCount {
            output[2 * i] = re[i] * scale
            output[2 * i + 1] = -im[i] * scale
        }

        @inline(__always) func pack(bin k: Int) {
            let m = halfCount - k
            let xr = real[k], xi = k == 0 ? 0 : imaginary[k]
            let yr = real[m], yi = m == halfCount ? 0 : -imaginary[m]
            let evenRe = xr + yr, evenIm = xi + yi
            let dRe = xr - yr, dIm = xi - yi
            let c = splitCos[k], s = -splitSin[k]
            let oddRe = dRe * c - dIm * s, oddIm = dRe * s + dIm * c
            packedReal[k] = evenRe - oddIm
            packedImaginary[k] = -(evenIm + oddRe)
        }
    }

    /// Fills the scratch in bit-reversed order, slot p with complex point bitReversed[p] (a bit reversal is its own
    /// inverse), point i being (`real[i·stride]`, `imaginary[i·stride]`), and runs the first two radix-2 stages on
    /// each group of four slots as it goes, in registers: they need no multiplications (twiddles ±1, then 1 and
    /// −i) and this spares two passes over the scratch. The same operations in the same order as two separate
    /// stages, so the same results.
    @inline(__always) private func loadBitReversed(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>,
                                                   stride: Int) {
        let re = scratchReal, im = scratchImaginary
        @inline(__always) func frame(_ p: Int) -> (Float, Float) {
            let i = Int(bitReversed[p]) * stride
            return (real[i], imaginary[i])
        }
        guard halfCount >= 4 else {
            // Two complex points: one stage of span 1.
            let (r0, i0) = frame(0), (r1, i1) = frame(1)
            re[0] = r0 + r1; im[0] = i0 + i1
            re[1] = r0 - r1; im[1] = i0 - i1
            return
        }
        var p = 0
        while p < halfCount {
            let (x0, y0) = frame(p), (x1, y1) = frame(p + 1), (x2, y2) = frame(p + 2), (x3, y3) = frame(p + 3)
            // Span 1: twiddle 1.
            let r0 = x0 + x1, i0 = y0 + y1, r1 = x0 - x1, i1 = y0 - y1
            let r2 = x2 + x3, i2 = y2 + y3, r3 = x2 - x3, i3 = y2 - y3
            // Span 2: twiddles 1 and −i ((r3 + i i3)(−i) = i3 − i r3).
            re[p] = r0 + r2; im[p] = i0 + i2
            re[p + 2] = r0 - r2; im[p + 2] = i0 - i2
            re[p + 1] = r1 + i3; im[p + 1] = i1 - r3
            re[p + 3] = r1 - i3; im[p + 3] = i1 + r3
            p += 4
        }
    }

    /// In-place iterative radix-2 decimation-in-time butterflies from span 4 on (`loadBitReversed` ran the first
    /// two stages), four butterflies at a time on SIMD4 lanes, with each stage's twiddles stored contiguously
    /// (`stageCos`, `stageSin`).
    private func butterflies() {
        let re = scratchReal, im = scratchImaginary
        let n = halfCount
        var start = 0
        // Spans s and 2s in one pass over each group of 4s: the same radix-2 butterflies in the same order (so the
        // same results), with the quarters kept in registers between the two stages.
        var span = 4
        while 2 * span < n {
            let c = stageCos + (span - 1), s = stageSin + (span - 1)
            let c2 = stageCos + (2 * span - 1), s2 = stageSin + (2 * span - 1)
            start = 0
            while start < n {
                var t = 0
                while t < span {
                    let i0 = start + t, i1 = i0 + span, i2 = i1 + span, i3 = i2 + span
                    let wc = load(c + t), ws = load(s + t)
                    var (ar, ai) = (load(re + i0), load(im + i0))
                    var (br, bi) = (load(re + i1), load(im + i1))
                    var (cr, ci) = (load(re + i2), load(im + i2))
                    var (dr, di) = (load(re + i3), load(im + i3))
                    (ar, ai, br, bi) = butterfly(ar, ai, br, bi, wc, ws)
                    (cr, ci, dr, di) = butterfly(cr, ci, dr, di, wc, ws)
                    (ar, ai, cr, ci) = butterfly(ar, ai, cr, ci, load(c2 + t), load(s2 + t))
                    (br, bi, dr, di) = butterfly(br, bi, dr, di, load(c2 + span + t), load(s2 + span + t))
                    store(ar, re + i0); store(ai, im + i0)
                    store(br, re + i1); store(bi, im + i1)
                    store(cr, re + i2); store(ci, im + i2)
                    store(dr, re + i3); store(di, im + i3)
                    t += 4
                }
                start += 4 * span
            }
            span *= 4
        }
        // A last single stage when the SIMD stages are odd in number.
        if span < n {
            let c = stageCos + (span - 1), s = stageSin + (span - 1)
            start = 0
            while start < n {
                var t = 0
                while t < span {
                    let i = start + t, j = i + span
                    let (ar, ai, xr, xi) = butterfly(load(re + i), load(im + i), load(re + j), load(im + j),
                                                     load(c + t), load(s + t))
                    store(ar, re + i); store(ai, im + i)
                    store(xr, re + j); store(xi, im + j)
                    t += 4
                }
                start += 2 * span
            }
        }
    }

    /// One radix-2 butterfly on four lanes: (a + w·x, a − w·x), w = wc + i·ws.
    @inline(__always) private func butterfly(_ ar: SpectrumLanes, _ ai: SpectrumLanes, _ xr: SpectrumLanes,
                                             _ xi: SpectrumLanes, _ wc: SpectrumLanes, _ ws: SpectrumLanes)
        -> (SpectrumLanes, SpectrumLanes, SpectrumLanes, SpectrumLanes) {
        let tr = xr * wc - xi * ws
        let ti = xr * ws + xi * wc
        return (ar + tr, ai + ti, ar - tr, ai - ti)
    }

    @inline(__always) private func load(_ pointer: UnsafePointer<Float>) -> SpectrumLanes { SpectrumLanes(loading: pointer) }

    @inline(__always) private func store(_ value: SpectrumLanes, _ pointer: UnsafeMutablePointer<Float>) {
        value.store(into: pointer)
    }
}
