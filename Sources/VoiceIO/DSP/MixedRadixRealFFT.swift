import Glibc

/// Fast Fourier transform of a real signal of any even length (e.g. 160, 220, 320, 882, 960: two 10 ms blocks at
/// 8, 11.025, 16, 44.1, 48 kHz), for `BlockAdaptiveFilter`'s window of two blocks; `RealFFT` covers powers of two
/// only. Radix-4, 2 and 5 passes have their own butterflies, run on four lanes (four butterflies at once) where the
/// layout allows (`PassGeometry`); any other prime factor runs as a direct DFT of that size, so lengths whose half
/// has only small factors are fast. The lanes are `SIMD4<Float>` in an optimised build and four plain floats in an
/// unoptimised one (`SpectrumLanes`): the same operations, the same results, and debug builds keep real-time pace.
///
/// Same conventions as `RealFFT`: `forward` gives the `frameCount / 2 + 1` bins of X[k] = Σ x[n] e^(−2πikn/N)
/// unscaled; `inverse` divides by N. Internally a complex transform of N/2 points (even frames real, odd frames
/// imaginary) runs as self-sorting (Stockham) radix passes, then one split pass separates the halves.
///
/// `init` allocates the tables and scratch (not real-time safe); `forward` and `inverse` are real-time safe.
/// One instance is not reentrant.
final class MixedRadixRealFFT {
    let frameCount: Int
    var binCount: Int { frameCount / 2 + 1 }
    private let halfCount: Int
    /// Radices from the first pass to the last (`passCount` of them), and each pass's offset into the twiddles.
    private let radices: UnsafeMutablePointer<Int>
    private let passCount: Int
    /// Per pass, the twiddles e^(−2πi·j·q/length) for j in 1 ..< radix, q in 0 ..< length / radix (j major).
    private let twiddleCos: UnsafeMutablePointer<Float>
    private let twiddleSin: UnsafeMutablePointer<Float>
    private let twiddleOffsets: UnsafeMutablePointer<Int>
    /// A direct DFT's inputs and its roots of unity, for the largest prime radix.
    private let directScratch: UnsafeMutablePointer<Float>
    private let splitCos: UnsafeMutablePointer<Float>
    private let splitSin: UnsafeMutablePointer<Float>
    /// Real parts at 0 ..< halfCount, imaginary parts from `plane` (halfCount rounded up to whole lanes), so that
    /// both planes start on a 16-byte boundary for the SIMD4 passes.
    private let bufferA: UnsafeMutablePointer<Float>
    private let bufferB: UnsafeMutablePointer<Float>
    private let plane: Int

    /// Not real-time safe. `frameCount` must be even and at least 4.
    init(frameCount: Int) {
        precondition(frameCount >= 4 && frameCount % 2 == 0, "MixedRadixRealFFT needs an even length of at least 4")
        self.frameCount = frameCount
        halfCount = frameCount / 2
        var rest = halfCount
        var radices: [Int] = []
        for p in [4, 2, 5] { while rest % p == 0 { radices.append(p); rest /= p } }
        var factor = 3
        while rest > 1 {
            while rest % factor == 0 { radices.append(factor); rest /= factor }
            factor += 2
        }
        passCount = radices.count
        self.radices = .allocate(capacity: max(radices.count, 1))
        self.radices.initialize(from: radices, count: radices.count)
        directScratch = .allocate(capacity: 4 * (radices.max() ?? 1))
        directScratch.initialize(repeating: 0, count: 4 * (radices.max() ?? 1))
        var offsets: [Int] = []
        var total = 0
        var length = halfCount
        for p in radices {
            offsets.append(total)
            total += (p - 1) * (length / p)
            length /= p
        }
        twiddleOffsets = .allocate(capacity: max(offsets.count, 1))
        twiddleOffsets.initialize(from: offsets, count: offsets.count)
        twiddleCos = .zeroed(max(total, 1))
        twiddleSin = .zeroed(max(total, 1))
        length = halfCount
        for (pass, p) in radices.enumerated() {
            let m = length / p
            for j in 1..<p {
                for q in 0..<m {
                    let angle = -2 * Double.pi * Double(j * q) / Double(length)
                    twiddleCos[offsets[pass] + (j - 1) * m + q] = Float(cos(angle))
                    twiddleSin[offsets[pass] + (j - 1) * m + q] = Float(sin(angle))
                }
            }
            length = m
        }
        splitCos = .zeroed(halfCount + 1)
        splitSin = .zeroed(halfCount + 1)
        for k in 0...halfCount {
            let angle = -2 * Double.pi * Double(k) / Double(frameCount)
            splitCos[k] = Float(cos(angle))
            splitSin[k] = Float(sin(angle))
        }
        plane = (halfCount + 3) / 4 * 4
        bufferA = .zeroed(2 * plane)
        bufferB = .zeroed(2 * plane)
    }

    deinit {
        for pointer in [twiddleCos, twiddleSin, splitCos, splitSin, bufferA, bufferB, directScratch] { pointer.deallocate() }
        radices.deallocate()
        twiddleOffsets.deallocate()
    }

    /// Spectrum of `input` (`frameCount` frames) into `real` and `imaginary` (`binCount` each). Real-time safe.
    func forward(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        let h = halfCount, zi = plane
        for i in 0..<h {
            bufferA[i] = input[2 &* i]
            bufferA[zi &+ i] = input[2 &* i &+ 1]
        }
        let z = transform(sign: -1)
        // Bin k pairs Z[k] with Z[h − k] (bins 0 and h: Z[0] with itself), four bins at a time, then the rest.
        var k = 0
        while k &+ 4 <= h {
            let a = (SpectrumLanes(loading: z + k), SpectrumLanes(loading: z + (zi &+ k)))
            let b = (SpectrumLanes(reversedFrom: z, at: h &- k, wrapping: h),
                     SpectrumLanes(reversedFrom: z + zi, at: h &- k, wrapping: h))
            let (re, im) = splitBins(a, b, cos: SpectrumLanes(loading: splitCos + k), sin: SpectrumLanes(loading: splitSin + k))
            re.store(into: real + k)
            im.store(into: imaginary + k)
            k &+= 4
        }
        while k <= h {
            let a = k == h ? 0 : k, b = k == 0 ? 0 : h &- k
            let (re, im) = splitBins((SpectrumLanes(repeating: z[a]), SpectrumLanes(repeating: z[zi &+ a])),
                                     (SpectrumLanes(repeating: z[b]), SpectrumLanes(repeating: z[zi &+ b])),
                                     cos: SpectrumLanes(repeating: splitCos[k]), sin: SpectrumLanes(repeating: splitSin[k]))
            real[k] = re.x
            imaginary[k] = im.x
            k &+= 1
        }
    }

    /// `frameCount` frames from `binCount` bins, divided by N (so `inverse(forward(x)) == x`). Real-time safe.
    func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let h = halfCount, zi = plane
        var k = 0
        while k &+ 4 <= h {
            let (re, im) = mergeBins((SpectrumLanes(loading: real + k), SpectrumLanes(loading: imaginary + k)),
                                     (SpectrumLanes(reversedFrom: real, at: h &- k, wrapping: -1),
                                      SpectrumLanes(reversedFrom: imaginary, at: h &- k, wrapping: -1)),
                                     cos: SpectrumLanes(loading: splitCos + k), sin: SpectrumLanes(loading: splitSin + k))
            re.store(into: bufferA + k)
            im.store(into: bufferA + (zi &+ k))
            k &+= 4
        }
        while k < h {
            let (re, im) = mergeBins((SpectrumLanes(repeating: real[k]), SpectrumLanes(repeating: imaginary[k])),
                                     (SpectrumLanes(repeating: real[h &- k]), SpectrumLanes(repeating: imaginary[h &- k])),
                                     cos: SpectrumLanes(repeating: splitCos[k]), sin: SpectrumLanes(repeating: splitSin[k]))
            bufferA[k] = re.x
            bufferA[zi &+ k] = im.x
            k &+= 1
        }
        let z = transform(sign: 1)
        let scale = 1 / Float(h)
        for i in 0..<h {
            output[2 &* i] = z[i] * scale
            output[2 &* i &+ 1] = z[zi &+ i] * scale
        }
    }

    /// The complex transform of `bufferA` (sign −1 forward, +1 backward, unscaled); returns the buffer holding it.
    private func transform(sign: Float) -> UnsafeMutablePointer<Float> {
        var x = bufferA, y = bufferB
        var length = halfCount, stride = 1
        for pass in 0..<passCount {
            let p = radices[pass]
            let m = length / p
            let offset = twiddleOffsets[pass]
            let geometry = PassGeometry(m: m, stride: stride, sign: sign, twiddleCos: twiddleCos + offset,
                                        twiddleSin: twiddleSin + offset, input: x, output: y, plane: plane)
            switch p {
            case 2, 4, 5: geometry.run(radix: p)
            default:
                smallRadixPass(p, m: m, stride: stride, sign: sign, tc: twiddleCos + offset, ts: twiddleSin + offset,
                               xr: x, xi: x + plane, yr: y, yi: y + plane)
            }
            swap(&x, &y)
            length = m
            stride *= p
        }
        return x
    }

    /// Any other radix: each butterfly a direct DFT of `p` points, then the twiddles.
    private func smallRadixPass(_ p: Int, m: Int, stride: Int, sign: Float, tc: UnsafeMutablePointer<Float>,
                                ts: UnsafeMutablePointer<Float>, xr: UnsafeMutablePointer<Float>,
                                xi: UnsafeMutablePointer<Float>, yr: UnsafeMutablePointer<Float>,
                                yi: UnsafeMutablePointer<Float>) {
        let inRe = directScratch, inIm = directScratch + p, rootCos = directScratch + 2 * p, rootSin = directScratch + 3 * p
        for r in 0..<p {
            let angle = 2 * Double.pi * Double(r) / Double(p)
            rootCos[r] = Float(cos(angle))
            rootSin[r] = Float(sin(angle)) * sign
        }
        for q in 0..<m {
            for t in 0..<stride {
                let i0 = t + stride * q
                for k in 0..<p {
                    inRe[k] = xr[i0 + k * stride * m]
                    inIm[k] = xi[i0 + k * stride * m]
                }
                let o0 = t + stride * p * q
                for j in 0..<p {
                    var sumR: Float = 0, sumI: Float = 0
                    var r = 0
                    for k in 0..<p {
                        sumR += inRe[k] * rootCos[r] - inIm[k] * rootSin[r]
                        sumI += inRe[k] * rootSin[r] + inIm[k] * rootCos[r]
                        r += j
                        if r >= p { r -= p }
                    }
                    if j == 0 {
                        yr[o0] = sumR; yi[o0] = sumI
                    } else {
                        let c = tc[(j - 1) * m + q], s = -sign * ts[(j - 1) * m + q]
                        yr[o0 + j * stride] = sumR * c - sumI * s
                        yi[o0 + j * stride] = sumR * s + sumI * c
                    }
                }
            }
        }
    }
}

/// Bins k … k + 3 of the real spectrum from the half-length transform's Z[k …] (`a`) and Z[h − k …] (`b`), with
/// the split twiddles e^(−2πik/N) of those bins.
@_transparent private func splitBins(_ a: ComplexLanes, _ b: ComplexLanes, cos c: SpectrumLanes, sin s: SpectrumLanes) -> ComplexLanes {
    let half = SpectrumLanes(repeating: 0.5)
    let evenRe = half * (a.re + b.re), evenIm = half * (a.im - b.im)
    let oddRe = half * (a.im + b.im), oddIm = half * (b.re - a.re)
    return (evenRe + c * oddRe - s * oddIm, evenIm + c * oddIm + s * oddRe)
}

/// Z[k …] of the half-length transform's input from bins k … (`a`) and h − k … (`b`) of the real spectrum, with the
/// split twiddles of bins k ….
@_transparent private func mergeBins(_ a: ComplexLanes, _ b: ComplexLanes, cos c: SpectrumLanes, sin: SpectrumLanes) -> ComplexLanes {
    let half = SpectrumLanes(repeating: 0.5)
    // conj(X[h − k]): its imaginary part is −b.im.
    let evenRe = half * (a.re + b.re), evenIm = half * (a.im - b.im)
    let differenceRe = half * (a.re - b.re), differenceIm = half * (a.im + b.im)
    // Odd half: the difference turned back by e^(+2πik/N).
    let s = SpectrumLanes(repeating: 0) - sin
    let oddRe = differenceRe * c - differenceIm * s, oddIm = differenceRe * s + differenceIm * c
    return (evenRe - oddIm, evenIm + oddRe)
}
