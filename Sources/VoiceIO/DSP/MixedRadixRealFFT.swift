import Glibc

/// Fast Fourier transform of a real signal of any even length (e.g. 160, 220, 320, 882, 960: two 10 ms blocks at
/// 8, 11.025, 16, 44.1, 48 kHz), for `BlockAdaptiveFilter`'s window of two blocks; `RealFFT` covers powers of two
/// only. Radix-4, 2 and 5 passes have their own butterflies; any other prime factor runs as a direct DFT of that
/// size, so lengths whose half has only small factors are fast.
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
        for i in 0..<h {
            bufferA[i] = input[2 * i]
            bufferA[h + i] = input[2 * i + 1]
        }
        let z = transform(sign: -1)
        for k in 0...h {
            let a = k == h ? 0 : k, b = k == 0 ? 0 : h - k
            let ar = z[a], ai = z[h + a], br = z[b], bi = z[h + b]
            let evenRe = 0.5 * (ar + br), evenIm = 0.5 * (ai - bi)
            let oddRe = 0.5 * (ai + bi), oddIm = -0.5 * (ar - br)
            let c = splitCos[k], s = splitSin[k]
            real[k] = evenRe + c * oddRe - s * oddIm
            imaginary[k] = evenIm + c * oddIm + s * oddRe
        }
    }

    /// `frameCount` frames from `binCount` bins, divided by N (so `inverse(forward(x)) == x`). Real-time safe.
    func inverse(real: UnsafePointer<Float>, imaginary: UnsafePointer<Float>, output: UnsafeMutablePointer<Float>) {
        let h = halfCount
        for k in 0..<h {
            let ar = real[k], ai = imaginary[k], br = real[h - k], bi = -imaginary[h - k]
            let evenRe = 0.5 * (ar + br), evenIm = 0.5 * (ai + bi)
            let differenceRe = 0.5 * (ar - br), differenceIm = 0.5 * (ai - bi)
            // Odd half: the difference turned back by e^(+2πik/N).
            let c = splitCos[k], s = -splitSin[k]
            let oddRe = differenceRe * c - differenceIm * s, oddIm = differenceRe * s + differenceIm * c
            bufferA[k] = evenRe - oddIm
            bufferA[h + k] = evenIm + oddRe
        }
        let z = transform(sign: 1)
        let scale = 1 / Float(h)
        for i in 0..<h {
            output[2 * i] = z[i] * scale
            output[2 * i + 1] = z[h + i] * scale
        }
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
            switch p {
            case 2:
                for q in 0..<m {
                    let c = tc[q], s = -sign * ts[q]
                    for t in 0..<stride {
                        let i0 = t + stride * q, i1 = i0 + stride * m
                        let ar = xr[i0], ai = xi[i0], br = xr[i1], bi = xi[i1]
                        let o0 = t + stride * 2 * q, o1 = o0 + stride
                        yr[o0] = ar + br; yi[o0] = ai + bi
                        let dr = ar - br, di = ai - bi
                        yr[o1] = dr * c - di * s; yi[o1] = dr * s + di * c
                    }
                }
            case 4:
                for q in 0..<m {
                    let c1 = tc[q], s1 = -sign * ts[q]
                    let c2 = tc[m + q], s2 = -sign * ts[m + q]
                    let c3 = tc[2 * m + q], s3 = -sign * ts[2 * m + q]
                    for t in 0..<stride {
                        let i0 = t + stride * q, step = stride * m
                        let ar = xr[i0], ai = xi[i0]
                        let br = xr[i0 + step], bi = xi[i0 + step]
                        let cr = xr[i0 + 2 * step], ci = xi[i0 + 2 * step]
                        let dr = xr[i0 + 3 * step], di = xi[i0 + 3 * step]
                        let sumACr = ar + cr, sumACi = ai + ci, difACr = ar - cr, difACi = ai - ci
                        let sumBDr = br + dr, sumBDi = bi + di, difBDr = br - dr, difBDi = bi - di
                        // ±i·(b − d): the sign of the rotation follows the direction of the transform.
                        let rotR = -sign * difBDi, rotI = sign * difBDr
                        let o0 = t + stride * 4 * q
                        yr[o0] = sumACr + sumBDr; yi[o0] = sumACi + sumBDi
                        let u1r = difACr + rotR, u1i = difACi + rotI
                        let u2r = sumACr - sumBDr, u2i = sumACi - sumBDi
                        let u3r = difACr - rotR, u3i = difACi - rotI
                        yr[o0 + stride] = u1r * c1 - u1i * s1; yi[o0 + stride] = u1r * s1 + u1i * c1
                        yr[o0 + 2 * stride] = u2r * c2 - u2i * s2; yi[o0 + 2 * stride] = u2r * s2 + u2i * c2
                        yr[o0 + 3 * stride] = u3r * c3 - u3i * s3; yi[o0 + 3 * stride] = u3r * s3 + u3i * c3
                    }
                }
            case 5:
                radix5Pass(m: m, stride: stride, sign: sign, tc: tc, ts: ts, xr: xr, xi: xi, yr: yr, yi: yi)
            default:
                smallRadixPass(p, m: m, stride: stride, sign: sign, tc: tc, ts: ts, xr: xr, xi: xi, yr: yr, yi: yi)
            }
            swap(&x, &y)
            length = m
            stride *= p
        }
        return x
    }

    /// A radix-5 pass: y_j = Σ_k a_k ω^(jk) from the sums and differences of the mirrored pairs (a1, a4), (a2, a3).
    private func radix5Pass(m: Int, stride: Int, sign: Float, tc: UnsafeMutablePointer<Float>,
                            ts: UnsafeMutablePointer<Float>, xr: UnsafeMutablePointer<Float>,
                            xi: UnsafeMutablePointer<Float>, yr: UnsafeMutablePointer<Float>,
                            yi: UnsafeMutablePointer<Float>) {
        let c1 = Float(cos(2 * Double.pi / 5)), c2 = Float(cos(4 * Double.pi / 5))
        let s1 = sign * Float(sin(2 * Double.pi / 5)), s2 = sign * Float(sin(4 * Double.pi / 5))
        let step = stride * m
        for q in 0..<m {
            let w1c = tc[q], w1s = -sign * ts[q], w2c = tc[m + q], w2s = -sign * ts[m + q]
            let w3c = tc[2 * m + q], w3s = -sign * ts[2 * m + q], w4c = tc[3 * m + q], w4s = -sign * ts[3 * m + q]
            for t in 0..<stride {
                let i0 = t + stride * q
                let a0r = xr[i0], a0i = xi[i0]
                let a1r = xr[i0 + step], a1i = xi[i0 + step], a2r = xr[i0 + 2 * step], a2i = xi[i0 + 2 * step]
                let a3r = xr[i0 + 3 * step], a3i = xi[i0 + 3 * step], a4r = xr[i0 + 4 * step], a4i = xi[i0 + 4 * step]
                let t1r = a1r + a4r, t1i = a1i + a4i, t2r = a2r + a3r, t2i = a2i + a3i
                let t3r = a1r - a4r, t3i = a1i - a4i, t4r = a2r - a3r, t4i = a2i - a3i
                let b1r = a0r + c1 * t1r + c2 * t2r, b1i = a0i + c1 * t1i + c2 * t2i
                let b2r = a0r + c2 * t1r + c1 * t2r, b2i = a0i + c2 * t1i + c1 * t2i
                let u1r = s1 * t3r + s2 * t4r, u1i = s1 * t3i + s2 * t4i
                let u2r = s2 * t3r - s1 * t4r, u2i = s2 * t3i - s1 * t4i
                let o0 = t + stride * 5 * q
                yr[o0] = a0r + t1r + t2r; yi[o0] = a0i + t1i + t2i
                // y1 = b1 + i·u1, y4 = b1 − i·u1, y2 = b2 + i·u2, y3 = b2 − i·u2; then the twiddles.
                let y1r = b1r - u1i, y1i = b1i + u1r, y4r = b1r + u1i, y4i = b1i - u1r
                let y2r = b2r - u2i, y2i = b2i + u2r, y3r = b2r + u2i, y3i = b2i - u2r
                yr[o0 + stride] = y1r * w1c - y1i * w1s; yi[o0 + stride] = y1r * w1s + y1i * w1c
                yr[o0 + 2 * stride] = y2r * w2c - y2i * w2s; yi[o0 + 2 * stride] = y2r * w2s + y2i * w2c
                yr[o0 + 3 * stride] = y3r * w3c - y3i * w3s; yi[o0 + 3 * stride] = y3r * w3s + y3i * w3c
                yr[o0 + 4 * stride] = y4r * w4c - y4i * w4s; yi[o0 + 4 * stride] = y4r * w4s + y4i * w4c
            }
        }
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
