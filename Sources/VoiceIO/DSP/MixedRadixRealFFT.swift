import Glibc

/// Fast Fourier transform of a real signal of any even length (e.g. 160, 220, 320, 882, 960: two 10 ms blocks at
/// 8, 11.025, 16, 44.1, 48 kHz), for `BlockAdaptiveFilter`'s window of two blocks; `RealFFT` covers powers of two
/// only. Radix-4, 2 and 5 passes have their own butterflies, run four at a time on SIMD4 lanes (`ButterflyLane`);
/// any other prime factor runs as a direct DFT of that size, so lengths whose half has only small factors are fast.
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
    private let bufferA: UnsafeMutablePointer<Float>   // real then imaginary, halfCount each
    private let bufferB: UnsafeMutablePointer<Float>

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
        twiddleCos = .allocate(capacity: max(total, 1))
        twiddleSin = .allocate(capacity: max(total, 1))
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
        splitCos = .allocate(capacity: halfCount + 1)
        splitSin = .allocate(capacity: halfCount + 1)
        for k in 0...halfCount {
            let angle = -2 * Double.pi * Double(k) / Double(frameCount)
            splitCos[k] = Float(cos(angle))
            splitSin[k] = Float(sin(angle))
        }
        bufferA = .allocate(capacity: 2 * halfCount)
        bufferB = .allocate(capacity: 2 * halfCount)
        bufferA.initialize(repeating: 0, count: 2 * halfCount)
        bufferB.initialize(repeating: 0, count: 2 * halfCount)
    }

    deinit {
        for pointer in [twiddleCos, twiddleSin, splitCos, splitSin, bufferA, bufferB, directScratch] { pointer.deallocate() }
        radices.deallocate()
        twiddleOffsets.deallocate()
    }

    /// Spectrum of `input` (`frameCount` frames) into `real` and `imaginary` (`binCount` each). Real-time safe.
    func forward(_ input: UnsafePointer<Float>, real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        let h = halfCount
        let laneEnd = h - h % 4
        var i = 0
        while i < laneEnd {
            let first = input.lanes(at: 2 &* i), second = input.lanes(at: 2 &* i &+ 4)
            bufferA.storeLanes(SIMD4(first[0], first[2], second[0], second[2]), at: i)
            bufferA.storeLanes(SIMD4(first[1], first[3], second[1], second[3]), at: h &+ i)
            i &+= 4
        }
        while i < h {
            bufferA[i] = input[2 &* i]
            bufferA[h &+ i] = input[2 &* i &+ 1]
            i &+= 1
        }
        let z = UnsafePointer(transform(sign: -1))
        // Bins 0 and h both pair z[0] with itself; bins 1 ..< h pair z[k] with z[h − k], four at a time.
        let z0 = SplitComplex<Float>(z[0], z[h])
        splitBin(z0, z0, k: 0, real: real, imaginary: imaginary)
        splitBin(z0, z0, k: h, real: real, imaginary: imaginary)
        let bins = h &- 1, binLaneEnd = 1 &+ (bins - bins % 4)
        var k = 1
        while k < binLaneEnd {
            let a = SplitComplex<SIMD4<Float>>(z.lanes(at: k), z.lanes(at: h &+ k))
            let b = SplitComplex<SIMD4<Float>>(.loadReversed(z, endingAt: h &- k), .loadReversed(z, endingAt: 2 &* h &- k))
            splitBin(a, b, k: k, real: real, imaginary: imaginary)
            k &+= 4
        }
        while k < h {
            splitBin(SplitComplex<Float>(z[k], z[h &+ k]), SplitComplex(z[h &- k], z[2 &* h &- k]), k: k, real: real,
                     imaginary: imaginary)
            k &+= 1
        }
    }

    /// Bins k ..< k + width of the real spectrum from the half-length transform's values `a` = Z[k] and `b` = Z[h − k].
    @inline(__always) private func splitBin<L: ButterflyLane>(_ a: SplitComplex<L>, _ b: SplitComplex<L>, k: Int,
                                                               real: UnsafeMutablePointer<Float>,
                                                               imaginary: UnsafeMutablePointer<Float>) {
        let half = L(broadcasting: 0.5)
        let evenRe = half * (a.re + b.re), evenIm = half * (a.im - b.im)
        let oddRe = half * (a.im + b.im), oddIm = half * (b.re - a.re)
        let c = L.load(splitCos, at: k), s = L.load(splitSin, at: k)
        (evenRe + c * oddRe - s * oddIm).store(into: real, at: k)
        (evenIm + c * oddIm + s * oddRe).store(into: imaginary, at: k)
    }

    /// `frameCount` frames from `binCount` bins, divided by N (so `inverse(forward(x)) == x`). Real-time safe.
    func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let h = halfCount
        let laneEnd = h - h % 4
        var k = 0
        while k < laneEnd { mergeBin(SIMD4<Float>.self, k: k, real: real, imaginary: imaginary); k &+= 4 }
        while k < h { mergeBin(Float.self, k: k, real: real, imaginary: imaginary); k &+= 1 }
        let z = transform(sign: 1)
        let scale = 1 / Float(h)
        var i = 0
        while i < laneEnd {
            let even = z.lanes(at: i) * scale, odd = z.lanes(at: h &+ i) * scale
            output.storeLanes(SIMD4(even[0], odd[0], even[1], odd[1]), at: 2 &* i)
            output.storeLanes(SIMD4(even[2], odd[2], even[3], odd[3]), at: 2 &* i &+ 4)
            i &+= 4
        }
        while i < h {
            output[2 &* i] = z[i] * scale
            output[2 &* i &+ 1] = z[h &+ i] * scale
            i &+= 1
        }
    }

    /// Z[k] ..< Z[k + width] of the half-length transform's input from bins k and h − k of the real spectrum.
    @inline(__always) private func mergeBin<L: ButterflyLane>(_: L.Type, k: Int, real: UnsafePointer<Float>,
                                                               imaginary: UnsafePointer<Float>) {
        let h = halfCount
        let half = L(broadcasting: 0.5)
        let ar = L.load(real, at: k)
        let ai = L.load(imaginary, at: k)
        let br = L.loadReversed(real, endingAt: h &- k), biMirror = L.loadReversed(imaginary, endingAt: h &- k)
        // b = conj(X[h − k]): its imaginary part is −biMirror.
        let evenRe = half * (ar + br), evenIm = half * (ai - biMirror)
        let differenceRe = half * (ar - br), differenceIm = half * (ai + biMirror)
        // Odd half: the difference turned back by e^(+2πik/N).
        let c = L.load(splitCos, at: k), s = L(broadcasting: 0) - L.load(splitSin, at: k)
        let oddRe = differenceRe * c - differenceIm * s, oddIm = differenceRe * s + differenceIm * c
        (evenRe - oddIm).store(into: bufferA, at: k)
        (evenIm + oddRe).store(into: bufferA, at: h &+ k)
    }

    /// The complex transform of `bufferA` (sign −1 forward, +1 backward, unscaled); returns the buffer holding it.
    private func transform(sign: Float) -> UnsafeMutablePointer<Float> {
        let h = halfCount
        var x = bufferA, y = bufferB
        var length = h, stride = 1
        for pass in 0..<passCount {
            let p = radices[pass]
            let m = length / p
            let tc = twiddleCos + twiddleOffsets[pass], ts = twiddleSin + twiddleOffsets[pass]
            let xr = x, xi = x + h, yr = y, yi = y + h
            let pass = PassGeometry(m: m, stride: stride, sign: sign, tc: tc, ts: ts, xr: xr, xi: xi, yr: yr, yi: yi)
            // Four neighbouring butterflies (t, t + 1, …) at once while they fill a SIMD4, then one at a time.
            let laneEnd = stride - stride % SIMD4<Float>.width
            switch p {
            case 2:
                if laneEnd > 0 { pass.radix2(SIMD4<Float>.self, from: 0) }
                if laneEnd < stride { pass.radix2(Float.self, from: laneEnd) }
            case 4 where stride == 1 && m % SIMD4<Float>.width == 0:
                pass.radix4AcrossButterflies()
            case 4:
                if laneEnd > 0 { pass.radix4(SIMD4<Float>.self, from: 0) }
                if laneEnd < stride { pass.radix4(Float.self, from: laneEnd) }
            case 5:
                if laneEnd > 0 { pass.radix5(SIMD4<Float>.self, from: 0) }
                if laneEnd < stride { pass.radix5(Float.self, from: laneEnd) }
            default:
                smallRadixPass(p, m: m, stride: stride, sign: sign, tc: tc, ts: ts, xr: xr, xi: xi, yr: yr, yi: yi)
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

/// One Stockham pass's sizes and buffers: `m` butterflies of the pass's radix, each over `stride` neighbouring
/// columns, reading `xr`/`xi` and writing `yr`/`yi`. The radix-2, 4 and 5 butterflies are generic over
/// `ButterflyLane`, so the same code runs four columns at a time and on the leftover columns. Real-time safe.
private struct PassGeometry {
    let m: Int
    let stride: Int
    let sign: Float
    let tc: UnsafeMutablePointer<Float>
    let ts: UnsafeMutablePointer<Float>
    let xr: UnsafeMutablePointer<Float>
    let xi: UnsafeMutablePointer<Float>
    let yr: UnsafeMutablePointer<Float>
    let yi: UnsafeMutablePointer<Float>

    /// The `index`-th twiddle of the pass (`index` = (j − 1)·m + q), turned to the transform's direction.
    @inline(__always) func twiddle<L: ButterflyLane>(_ index: Int) -> (cos: L, sin: L) {
        (L(broadcasting: tc[index]), L(broadcasting: -sign * ts[index]))
    }

    @inline(__always) func radix2<L: ButterflyLane>(_: L.Type, from start: Int) {
        let step = stride &* m
        for q in 0..<m {
            let w: (cos: L, sin: L) = twiddle(q)
            var t = start
            while t &+ L.width <= stride {
                let i0 = t &+ stride &* q, o0 = t &+ stride &* 2 &* q
                let a = SplitComplex<L>(xr, xi, at: i0), b = SplitComplex<L>(xr, xi, at: i0 &+ step)
                (a + b).store(yr, yi, at: o0)
                (a - b).rotated(cos: w.cos, sin: w.sin).store(yr, yi, at: o0 &+ stride)
                t &+= L.width
            }
        }
    }

    /// One radix-4 butterfly before its twiddles.
    @inline(__always) func radix4Butterfly<L: ButterflyLane>(_ a: SplitComplex<L>, _ b: SplitComplex<L>,
                                                             _ c: SplitComplex<L>, _ d: SplitComplex<L>)
        -> (SplitComplex<L>, SplitComplex<L>, SplitComplex<L>, SplitComplex<L>) {
        let sumAC = a + c, differenceAC = a - c, sumBD = b + d, differenceBD = b - d
        // ±i·(b − d): the sign of the rotation follows the direction of the transform.
        let rotated = SplitComplex(L(broadcasting: -sign) * differenceBD.im, L(broadcasting: sign) * differenceBD.re)
        return (sumAC + sumBD, differenceAC + rotated, sumAC - sumBD, differenceAC - rotated)
    }

    @inline(__always) func radix4<L: ButterflyLane>(_: L.Type, from start: Int) {
        let step = stride &* m
        for q in 0..<m {
            let w1: (cos: L, sin: L) = twiddle(q), w2: (cos: L, sin: L) = twiddle(m &+ q)
            let w3: (cos: L, sin: L) = twiddle(2 &* m &+ q)
            var t = start
            while t &+ L.width <= stride {
                let i0 = t &+ stride &* q, o0 = t &+ stride &* 4 &* q
                let (y0, y1, y2, y3) = radix4Butterfly(
                    SplitComplex<L>(xr, xi, at: i0), SplitComplex<L>(xr, xi, at: i0 &+ step),
                    SplitComplex<L>(xr, xi, at: i0 &+ 2 &* step), SplitComplex<L>(xr, xi, at: i0 &+ 3 &* step))
                y0.store(yr, yi, at: o0)
                y1.rotated(cos: w1.cos, sin: w1.sin).store(yr, yi, at: o0 &+ stride)
                y2.rotated(cos: w2.cos, sin: w2.sin).store(yr, yi, at: o0 &+ 2 &* stride)
                y3.rotated(cos: w3.cos, sin: w3.sin).store(yr, yi, at: o0 &+ 3 &* stride)
                t &+= L.width
            }
        }
    }

    /// A radix-4 pass with `stride` 1 (the first pass) and `m` a multiple of 4: four butterflies q … q + 3 at once,
    /// their inputs and twiddles contiguous; each butterfly's four outputs are neighbours, so the lanes are
    /// transposed on the way out.
    @inline(__always) func radix4AcrossButterflies() {
        let minusSign = SIMD4<Float>(repeating: -sign)
        var q = 0
        while q < m {
            let (y0, y1, y2, y3) = radix4Butterfly(
                SplitComplex<SIMD4<Float>>(xr, xi, at: q), SplitComplex<SIMD4<Float>>(xr, xi, at: q &+ m),
                SplitComplex<SIMD4<Float>>(xr, xi, at: q &+ 2 &* m), SplitComplex<SIMD4<Float>>(xr, xi, at: q &+ 3 &* m))
            let z1 = y1.rotated(cos: tc.lanes(at: q), sin: minusSign * ts.lanes(at: q))
            let z2 = y2.rotated(cos: tc.lanes(at: m &+ q), sin: minusSign * ts.lanes(at: m &+ q))
            let z3 = y3.rotated(cos: tc.lanes(at: 2 &* m &+ q), sin: minusSign * ts.lanes(at: 2 &* m &+ q))
            storeTransposed(y0.re, z1.re, z2.re, z3.re, into: yr + 4 &* q)
            storeTransposed(y0.im, z1.im, z2.im, z3.im, into: yi + 4 &* q)
            q &+= 4
        }
    }

    /// Rows `r0` … `r3` written as columns: 16 floats, `r0[0], r1[0], r2[0], r3[0], r0[1], …`.
    @inline(__always) private func storeTransposed(_ r0: SIMD4<Float>, _ r1: SIMD4<Float>, _ r2: SIMD4<Float>,
                                                   _ r3: SIMD4<Float>, into pointer: UnsafeMutablePointer<Float>) {
        for lane in 0..<4 {
            pointer.storeLanes(SIMD4(r0[lane], r1[lane], r2[lane], r3[lane]), at: 4 &* lane)
        }
    }

    /// y_j = Σ_k a_k ω^(jk) from the sums and differences of the mirrored pairs (a1, a4), (a2, a3).
    @inline(__always) func radix5<L: ButterflyLane>(_: L.Type, from start: Int) {
        let c1 = L(broadcasting: Float(cos(2 * Double.pi / 5))), c2 = L(broadcasting: Float(cos(4 * Double.pi / 5)))
        let s1 = L(broadcasting: sign * Float(sin(2 * Double.pi / 5)))
        let s2 = L(broadcasting: sign * Float(sin(4 * Double.pi / 5)))
        let step = stride &* m
        for q in 0..<m {
            let w1: (cos: L, sin: L) = twiddle(q), w2: (cos: L, sin: L) = twiddle(m &+ q)
            let w3: (cos: L, sin: L) = twiddle(2 &* m &+ q), w4: (cos: L, sin: L) = twiddle(3 &* m &+ q)
            var t = start
            while t &+ L.width <= stride {
                let i0 = t &+ stride &* q, o0 = t &+ stride &* 5 &* q
                let a0 = SplitComplex<L>(xr, xi, at: i0), a1 = SplitComplex<L>(xr, xi, at: i0 &+ step)
                let a2 = SplitComplex<L>(xr, xi, at: i0 &+ 2 &* step), a3 = SplitComplex<L>(xr, xi, at: i0 &+ 3 &* step)
                let a4 = SplitComplex<L>(xr, xi, at: i0 &+ 4 &* step)
                let t1 = a1 + a4, t2 = a2 + a3, t3 = a1 - a4, t4 = a2 - a3
                let b1 = a0 + t1.scaled(c1) + t2.scaled(c2), b2 = a0 + t1.scaled(c2) + t2.scaled(c1)
                let u1 = t3.scaled(s1) + t4.scaled(s2), u2 = t3.scaled(s2) - t4.scaled(s1)
                // y1 = b1 + i·u1, y4 = b1 − i·u1, y2 = b2 + i·u2, y3 = b2 − i·u2; then the twiddles.
                let y1 = SplitComplex(b1.re - u1.im, b1.im + u1.re), y4 = SplitComplex(b1.re + u1.im, b1.im - u1.re)
                let y2 = SplitComplex(b2.re - u2.im, b2.im + u2.re), y3 = SplitComplex(b2.re + u2.im, b2.im - u2.re)
                (a0 + t1 + t2).store(yr, yi, at: o0)
                y1.rotated(cos: w1.cos, sin: w1.sin).store(yr, yi, at: o0 &+ stride)
                y2.rotated(cos: w2.cos, sin: w2.sin).store(yr, yi, at: o0 &+ 2 &* stride)
                y3.rotated(cos: w3.cos, sin: w3.sin).store(yr, yi, at: o0 &+ 3 &* stride)
                y4.rotated(cos: w4.cos, sin: w4.sin).store(yr, yi, at: o0 &+ 4 &* stride)
                t &+= L.width
            }
        }
    }
}
