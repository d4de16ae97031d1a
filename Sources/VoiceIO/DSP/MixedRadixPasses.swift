import Glibc

/// One Stockham pass of a given radix over the planes `input` → `output`: butterfly q gathers its inputs `stride · m`
/// apart from column t + stride · q and writes them `stride` apart from t + stride · radix · q. The butterflies run
/// four neighbouring columns at once when `stride` is a multiple of four (aligned lanes), four neighbouring q at once
/// in a first radix-4 pass (stride 1) whose m is a multiple of four (outputs transposed on the way out), and one at a
/// time otherwise (lane 0 of the same code). Real-time safe: no allocation, pointers into `MixedRadixRealFFT`'s buffers.
struct PassGeometry {
    let m: Int
    let stride: Int
    let sign: Float
    let twiddleCos: UnsafeMutablePointer<Float>
    let twiddleSin: UnsafeMutablePointer<Float>
    let xr: UnsafeMutablePointer<Float>, xi: UnsafeMutablePointer<Float>
    let yr: UnsafeMutablePointer<Float>, yi: UnsafeMutablePointer<Float>
    private let acrossColumns: Bool
    private let columnStep: Int

    init(m: Int, stride: Int, sign: Float, twiddleCos: UnsafeMutablePointer<Float>,
         twiddleSin: UnsafeMutablePointer<Float>, input: UnsafeMutablePointer<Float>,
         output: UnsafeMutablePointer<Float>, plane: Int) {
        (self.m, self.stride, self.sign) = (m, stride, sign)
        (self.twiddleCos, self.twiddleSin) = (twiddleCos, twiddleSin)
        // Each buffer holds its real parts first and its imaginary parts from `plane`.
        (xr, xi, yr, yi) = (input, input + plane, output, output + plane)
        acrossColumns = stride % 4 == 0
        columnStep = acrossColumns ? 4 : 1
    }

    /// Twiddle j (1 ..< radix) of butterfly q, the same in all four lanes.
    @_transparent private func twiddle(_ j: Int, _ q: Int) -> (cos: SpectrumLanes, sin: SpectrumLanes) {
        let index = (j &- 1) &* m &+ q
        return (SpectrumLanes(repeating: twiddleCos[index]), SpectrumLanes(repeating: -sign * twiddleSin[index]))
    }

    /// Input k (0 ..< radix) of butterfly q at column t, four columns from t when `acrossColumns`.
    @_transparent private func input(_ k: Int, _ q: Int, _ t: Int) -> ComplexLanes {
        let index = t &+ stride &* (q &+ k &* m)
        if acrossColumns { return (xr.lanes[index &>> 2], xi.lanes[index &>> 2]) }
        return (SpectrumLanes(repeating: xr[index]), SpectrumLanes(repeating: xi[index]))
    }

    /// Output j of butterfly q at column t (radix `p`), four columns from t when `acrossColumns`.
    @_transparent private func store(_ value: ComplexLanes, _ j: Int, _ q: Int, _ t: Int, radix p: Int) {
        let index = t &+ stride &* (p &* q &+ j)
        if acrossColumns {
            yr.lanes[index &>> 2] = value.re
            yi.lanes[index &>> 2] = value.im
        } else {
            yr[index] = value.re.x
            yi[index] = value.im.x
        }
    }

    func radix2() {
        for q in 0..<m {
            let w = twiddle(1, q)
            var t = 0
            while t < stride {
                let a = input(0, q, t), b = input(1, q, t)
                store((a.re + b.re, a.im + b.im), 0, q, t, radix: 2)
                store(rotated((a.re - b.re, a.im - b.im), cos: w.cos, sin: w.sin), 1, q, t, radix: 2)
                t &+= columnStep
            }
        }
    }

    func radix4() {
        if stride == 1 && m % 4 == 0 { return radix4AcrossButterflies() }
        let direction = SpectrumLanes(repeating: sign)
        for q in 0..<m {
            let w1 = twiddle(1, q), w2 = twiddle(2, q), w3 = twiddle(3, q)
            var t = 0
            while t < stride {
                let (y0, y1, y2, y3) = Self.radix4Butterfly(input(0, q, t), input(1, q, t), input(2, q, t),
                                                             input(3, q, t), direction: direction)
                store(y0, 0, q, t, radix: 4)
                store(rotated(y1, cos: w1.cos, sin: w1.sin), 1, q, t, radix: 4)
                store(rotated(y2, cos: w2.cos, sin: w2.sin), 2, q, t, radix: 4)
                store(rotated(y3, cos: w3.cos, sin: w3.sin), 3, q, t, radix: 4)
                t &+= columnStep
            }
        }
    }

    /// The first radix-4 pass (stride 1): butterflies q … q + 3 in the lanes, their inputs and twiddles contiguous;
    /// each butterfly's four outputs are neighbours, so the lanes are transposed on the way out.
    private func radix4AcrossButterflies() {
        let direction = SpectrumLanes(repeating: sign), minusSign = SpectrumLanes(repeating: -sign)
        let quarter = m &>> 2
        var v = 0
        while v < quarter {
            let (y0, y1, y2, y3) = Self.radix4Butterfly(
                (xr.lanes[v], xi.lanes[v]), (xr.lanes[v &+ quarter], xi.lanes[v &+ quarter]),
                (xr.lanes[v &+ 2 &* quarter], xi.lanes[v &+ 2 &* quarter]),
                (xr.lanes[v &+ 3 &* quarter], xi.lanes[v &+ 3 &* quarter]), direction: direction)
            let z1 = rotated(y1, cos: twiddleCos.lanes[v], sin: minusSign * twiddleSin.lanes[v])
            let z2 = rotated(y2, cos: twiddleCos.lanes[v &+ quarter], sin: minusSign * twiddleSin.lanes[v &+ quarter])
            let z3 = rotated(y3, cos: twiddleCos.lanes[v &+ 2 &* quarter],
                             sin: minusSign * twiddleSin.lanes[v &+ 2 &* quarter])
            Self.storeTransposed(y0.re, z1.re, z2.re, z3.re, into: yr.lanes + 4 &* v)
            Self.storeTransposed(y0.im, z1.im, z2.im, z3.im, into: yi.lanes + 4 &* v)
            v &+= 1
        }
    }

    /// Rows r0 … r3 written as columns into four lanes: r0[0], r1[0], r2[0], r3[0], r0[1], ….
    @_transparent private static func storeTransposed(_ r0: SpectrumLanes, _ r1: SpectrumLanes, _ r2: SpectrumLanes, _ r3: SpectrumLanes,
                                                          into lanes: UnsafeMutablePointer<SpectrumLanes>) {
        lanes[0] = SpectrumLanes(r0.x, r1.x, r2.x, r3.x)
        lanes[1] = SpectrumLanes(r0.y, r1.y, r2.y, r3.y)
        lanes[2] = SpectrumLanes(r0.z, r1.z, r2.z, r3.z)
        lanes[3] = SpectrumLanes(r0.w, r1.w, r2.w, r3.w)
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
    func radix5() {
        let c1 = SpectrumLanes(repeating: Float(cos(2 * Double.pi / 5))), c2 = SpectrumLanes(repeating: Float(cos(4 * Double.pi / 5)))
        let s1 = SpectrumLanes(repeating: sign * Float(sin(2 * Double.pi / 5)))
        let s2 = SpectrumLanes(repeating: sign * Float(sin(4 * Double.pi / 5)))
        for q in 0..<m {
            let w1 = twiddle(1, q), w2 = twiddle(2, q), w3 = twiddle(3, q), w4 = twiddle(4, q)
            var t = 0
            while t < stride {
                let a0 = input(0, q, t), a1 = input(1, q, t), a2 = input(2, q, t), a3 = input(3, q, t)
                let a4 = input(4, q, t)
                let t1r = a1.re + a4.re, t1i = a1.im + a4.im, t2r = a2.re + a3.re, t2i = a2.im + a3.im
                let t3r = a1.re - a4.re, t3i = a1.im - a4.im, t4r = a2.re - a3.re, t4i = a2.im - a3.im
                let b1r = a0.re + c1 * t1r + c2 * t2r, b1i = a0.im + c1 * t1i + c2 * t2i
                let b2r = a0.re + c2 * t1r + c1 * t2r, b2i = a0.im + c2 * t1i + c1 * t2i
                let u1r = s1 * t3r + s2 * t4r, u1i = s1 * t3i + s2 * t4i
                let u2r = s2 * t3r - s1 * t4r, u2i = s2 * t3i - s1 * t4i
                store((a0.re + t1r + t2r, a0.im + t1i + t2i), 0, q, t, radix: 5)
                // y1 = b1 + i·u1, y4 = b1 − i·u1, y2 = b2 + i·u2, y3 = b2 − i·u2; then the twiddles.
                store(rotated((b1r - u1i, b1i + u1r), cos: w1.cos, sin: w1.sin), 1, q, t, radix: 5)
                store(rotated((b2r - u2i, b2i + u2r), cos: w2.cos, sin: w2.sin), 2, q, t, radix: 5)
                store(rotated((b2r + u2i, b2i - u2r), cos: w3.cos, sin: w3.sin), 3, q, t, radix: 5)
                store(rotated((b1r + u1i, b1i - u1r), cos: w4.cos, sin: w4.sin), 4, q, t, radix: 5)
                t &+= columnStep
            }
        }
    }
}
