import Glibc

/// One Stockham pass of a given radix over the planes `input` → `output`: butterfly q gathers its inputs `stride · m`
/// apart from column t + stride · q and writes them `stride` apart from t + stride · radix · q. The butterflies run
/// four neighbouring columns at once when `stride` is a multiple of four (aligned lanes) and one at a time otherwise
/// (lane 0 of the same code; plain floats in a first radix-4 pass). Each loop is compiled for one layout, and a last
/// pass (m = 1, every twiddle 1) skips the twiddles. Real-time safe: no allocation, pointers into
/// `MixedRadixRealFFT`'s buffers.
struct PassGeometry {
    let m: Int
    let stride: Int
    let sign: Float
    let twiddleCos: UnsafeMutablePointer<Float>
    let twiddleSin: UnsafeMutablePointer<Float>
    let xr: UnsafeMutablePointer<Float>, xi: UnsafeMutablePointer<Float>
    let yr: UnsafeMutablePointer<Float>, yi: UnsafeMutablePointer<Float>
    private let acrossColumns: Bool

    init(m: Int, stride: Int, sign: Float, twiddleCos: UnsafeMutablePointer<Float>,
         twiddleSin: UnsafeMutablePointer<Float>, input: UnsafeMutablePointer<Float>,
         output: UnsafeMutablePointer<Float>, plane: Int) {
        (self.m, self.stride, self.sign) = (m, stride, sign)
        (self.twiddleCos, self.twiddleSin) = (twiddleCos, twiddleSin)
        // Each buffer holds its real parts first and its imaginary parts from `plane`.
        (xr, xi, yr, yi) = (input, input + plane, output, output + plane)
        acrossColumns = stride % 4 == 0
    }

    /// Twiddle j (1 ..< radix) of butterfly q, the same in all four lanes.
    @_transparent private func twiddle(_ j: Int, _ q: Int) -> (cos: SpectrumLanes, sin: SpectrumLanes) {
        let index = (j &- 1) &* m &+ q
        return (SpectrumLanes(repeating: twiddleCos[index]), SpectrumLanes(repeating: -sign * twiddleSin[index]))
    }

    /// Input k (0 ..< radix) of butterfly q at column t, four columns from t when `across` (always a literal at
    /// the call, so each loop is compiled for one layout).
    @_transparent private func input(_ k: Int, _ q: Int, _ t: Int, across: Bool) -> ComplexLanes {
        let index = t &+ stride &* (q &+ k &* m)
        if across { return (xr.alignedLanes[index &>> 2], xi.alignedLanes[index &>> 2]) }
        return (SpectrumLanes(repeating: xr[index]), SpectrumLanes(repeating: xi[index]))
    }

    /// Output j of butterfly q at column t (radix `p`), four columns from t when `across`.
    @_transparent private func store(_ value: ComplexLanes, _ j: Int, _ q: Int, _ t: Int, radix p: Int, across: Bool) {
        let index = t &+ stride &* (p &* q &+ j)
        if across {
            yr.alignedLanes[index &>> 2] = value.re
            yi.alignedLanes[index &>> 2] = value.im
        } else {
            yr[index] = value.re.x
            yi[index] = value.im.x
        }
    }

    /// Output j of butterfly q turned by its twiddle `w`, or stored as it is in a last pass (m = 1, every twiddle 1).
    @_transparent private func store(_ value: ComplexLanes, _ j: Int, _ q: Int, _ t: Int, radix p: Int, across: Bool,
                                     twiddle w: (cos: SpectrumLanes, sin: SpectrumLanes), turned: Bool) {
        store(turned ? rotated(value, cos: w.cos, sin: w.sin) : value, j, q, t, radix: p, across: across)
    }

    /// Runs the pass of radix 2, 4 or 5 with its loop compiled for this pass's layout and for whether it turns its
    /// outputs by twiddles (a last pass, m = 1, does not: every twiddle is 1; radix 2 always does).
    func run(radix p: Int) {
        if p == 4 && stride == 1 { return radix4Scalar() }
        switch (acrossColumns, m == 1) {
        case (true, true): run(radix: p, across: true, turned: false)
        case (true, false): run(radix: p, across: true, turned: true)
        case (false, true): run(radix: p, across: false, turned: false)
        case (false, false): run(radix: p, across: false, turned: true)
        }
    }

    @_transparent private func run(radix p: Int, across: Bool, turned: Bool) {
        switch p {
        case 2: radix2(across: across)
        case 4: radix4(across: across, turned: turned)
        default: radix5(across: across, turned: turned)
        }
    }

    @_transparent private func radix2(across: Bool) {
        for q in 0..<m {
            let w = twiddle(1, q)
            var t = 0
            while t < stride {
                let a = input(0, q, t, across: across), b = input(1, q, t, across: across)
                store((a.re + b.re, a.im + b.im), 0, q, t, radix: 2, across: across)
                store(rotated((a.re - b.re, a.im - b.im), cos: w.cos, sin: w.sin), 1, q, t, radix: 2, across: across)
                t &+= across ? 4 : 1
            }
        }
    }

    @_transparent private func radix4(across: Bool, turned: Bool) {
        let direction = SpectrumLanes(repeating: sign)
        for q in 0..<m {
            let w1 = twiddle(1, q), w2 = twiddle(2, q), w3 = twiddle(3, q)
            var t = 0
            while t < stride {
                let (y0, y1, y2, y3) = Self.radix4Butterfly(input(0, q, t, across: across), input(1, q, t, across: across),
                                                             input(2, q, t, across: across), input(3, q, t, across: across),
                                                             direction: direction)
                store(y0, 0, q, t, radix: 4, across: across)
                store(y1, 1, q, t, radix: 4, across: across, twiddle: w1, turned: turned)
                store(y2, 2, q, t, radix: 4, across: across, twiddle: w2, turned: turned)
                store(y3, 3, q, t, radix: 4, across: across, twiddle: w3, turned: turned)
                t &+= across ? 4 : 1
            }
        }
    }

    /// The first radix-4 pass (stride 1) in plain floats, a butterfly at a time: its four outputs are neighbours,
    /// and four butterflies in lanes would need a transpose on the way out, which the optimiser takes apart into
    /// lane-by-lane arithmetic at twice these instructions.
    private func radix4Scalar() {
        let direction = sign
        for q in 0..<m {
            let i1 = q &+ m, i2 = i1 &+ m, i3 = i2 &+ m
            let sumACr = xr[q] + xr[i2], sumACi = xi[q] + xi[i2], differenceACr = xr[q] - xr[i2], differenceACi = xi[q] - xi[i2]
            let sumBDr = xr[i1] + xr[i3], sumBDi = xi[i1] + xi[i3]
            let differenceBDr = xr[i1] - xr[i3], differenceBDi = xi[i1] - xi[i3]
            let rotationR = (0 - direction) * differenceBDi, rotationI = direction * differenceBDr
            let o = 4 &* q
            yr[o] = sumACr + sumBDr
            yi[o] = sumACi + sumBDi
            Self.storeTurned(differenceACr + rotationR, differenceACi + rotationI, at: o &+ 1, twiddle: q, self)
            Self.storeTurned(sumACr - sumBDr, sumACi - sumBDi, at: o &+ 2, twiddle: m &+ q, self)
            Self.storeTurned(differenceACr - rotationR, differenceACi - rotationI, at: o &+ 3, twiddle: 2 &* m &+ q, self)
        }
    }

    /// (re, im) turned by twiddle entry `index` ((j − 1)·m + q for output j of butterfly q) into output `o`, in plain
    /// floats.
    @_transparent private static func storeTurned(_ re: Float, _ im: Float, at o: Int, twiddle index: Int, _ pass: PassGeometry) {
        let c = pass.twiddleCos[index], s = -pass.sign * pass.twiddleSin[index]
        pass.yr[o] = re * c - im * s
        pass.yi[o] = re * s + im * c
    }

    /// The four-point DFT of a, b, c, d before the twiddles; `direction` is the transform's sign in every lane.
    @_transparent private static func radix4Butterfly(_ a: ComplexLanes, _ b: ComplexLanes, _ c: ComplexLanes,
                                                          _ d: ComplexLanes, direction: SpectrumLanes)
        -> (ComplexLanes, ComplexLanes, ComplexLanes, ComplexLanes) {
        let sumACr = a.re + c.re, sumACi = a.im + c.im, differenceACr = a.re - c.re, differenceACi = a.im - c.im
        let sumBDr = b.re + d.re, sumBDi = b.im + d.im, differenceBDr = b.re - d.re, differenceBDi = b.im - d.im
        // ±i·(b − d): the sign of the rotation follows the direction of the transform.
        let rotationR = (SpectrumLanes(repeating: 0) - direction) * differenceBDi, rotationI = direction * differenceBDr
        return ((sumACr + sumBDr, sumACi + sumBDi), (differenceACr + rotationR, differenceACi + rotationI),
                (sumACr - sumBDr, sumACi - sumBDi), (differenceACr - rotationR, differenceACi - rotationI))
    }

    /// y_j = Σ_k a_k ω^(jk) from the sums and differences of the mirrored pairs (a1, a4), (a2, a3).
    @_transparent private func radix5(across: Bool, turned: Bool) {
        let c1 = SpectrumLanes(repeating: Float(cos(2 * Double.pi / 5))), c2 = SpectrumLanes(repeating: Float(cos(4 * Double.pi / 5)))
        let s1 = SpectrumLanes(repeating: sign * Float(sin(2 * Double.pi / 5)))
        let s2 = SpectrumLanes(repeating: sign * Float(sin(4 * Double.pi / 5)))
        for q in 0..<m {
            let w1 = twiddle(1, q), w2 = twiddle(2, q), w3 = twiddle(3, q), w4 = twiddle(4, q)
            var t = 0
            while t < stride {
                let a0 = input(0, q, t, across: across), a1 = input(1, q, t, across: across)
                let a2 = input(2, q, t, across: across), a3 = input(3, q, t, across: across)
                let a4 = input(4, q, t, across: across)
                let t1r = a1.re + a4.re, t1i = a1.im + a4.im, t2r = a2.re + a3.re, t2i = a2.im + a3.im
                let t3r = a1.re - a4.re, t3i = a1.im - a4.im, t4r = a2.re - a3.re, t4i = a2.im - a3.im
                let b1r = a0.re + c1 * t1r + c2 * t2r, b1i = a0.im + c1 * t1i + c2 * t2i
                let b2r = a0.re + c2 * t1r + c1 * t2r, b2i = a0.im + c2 * t1i + c1 * t2i
                let u1r = s1 * t3r + s2 * t4r, u1i = s1 * t3i + s2 * t4i
                let u2r = s2 * t3r - s1 * t4r, u2i = s2 * t3i - s1 * t4i
                store((a0.re + t1r + t2r, a0.im + t1i + t2i), 0, q, t, radix: 5, across: across)
                // y1 = b1 + i·u1, y4 = b1 − i·u1, y2 = b2 + i·u2, y3 = b2 − i·u2; then the twiddles.
                store((b1r - u1i, b1i + u1r), 1, q, t, radix: 5, across: across, twiddle: w1, turned: turned)
                store((b2r - u2i, b2i + u2r), 2, q, t, radix: 5, across: across, twiddle: w2, turned: turned)
                store((b2r + u2i, b2i - u2r), 3, q, t, radix: 5, across: across, twiddle: w3, turned: turned)
                store((b1r + u1i, b1i - u1r), 4, q, t, radix: 5, across: across, twiddle: w4, turned: turned)
                t &+= across ? 4 : 1
            }
        }
    }
}
