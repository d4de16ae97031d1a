import Glibc

/// An in-place radix-2 complex FFT of one fixed power-of-two size, tables built once in `init`.
///
/// Split storage (separate real and imaginary arrays). `forward` and `inverse` are real-time safe. `inverse`
/// scales by 1/size, so `inverse(forward(x)) == x`.
final class FFT {
    let size: Int
    private let bitReversed: UnsafeMutablePointer<Int>
    private let cosines: UnsafeMutablePointer<Float>
    private let sines: UnsafeMutablePointer<Float>

    init(size: Int) {
        precondition(size >= 2 && size & (size - 1) == 0, "FFT size must be a power of two")
        self.size = size
        bitReversed = .allocate(capacity: size)
        cosines = .allocate(capacity: size / 2)
        sines = .allocate(capacity: size / 2)
        var bits = 0
        while 1 << bits < size { bits += 1 }
        for index in 0..<size {
            var reversed = 0
            for bit in 0..<bits where index & (1 << bit) != 0 { reversed |= 1 << (bits - 1 - bit) }
            bitReversed[index] = reversed
        }
        for index in 0..<(size / 2) {
            let angle = -2 * Double.pi * Double(index) / Double(size)
            cosines[index] = Float(cos(angle))
            sines[index] = Float(sin(angle))
        }
    }

    deinit {
        bitReversed.deallocate()
        cosines.deallocate()
        sines.deallocate()
    }

    /// X[k] = Σ x[n] e^{-2πikn/N}. Real-time safe.
    func forward(real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        transform(real: real, imaginary: imaginary, sign: 1)
    }

    /// x[n] = (1/N) Σ X[k] e^{2πikn/N}. Real-time safe.
    func inverse(real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>) {
        transform(real: real, imaginary: imaginary, sign: -1)
        let scale = 1 / Float(size)
        for index in 0..<size {
            real[index] *= scale
            imaginary[index] *= scale
        }
    }

    private func transform(real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>, sign: Float) {
        for index in 0..<size {
            let other = bitReversed[index]
            if other > index {
                swap(&real[index], &real[other])
                swap(&imaginary[index], &imaginary[other])
            }
        }
        var half = 1
        while half < size {
            let stride = size / (2 * half)
            var start = 0
            while start < size {
                for offset in 0..<half {
                    let twiddleRe = cosines[offset * stride]
                    let twiddleIm = sign * sines[offset * stride]
                    let top = start + offset
                    let bottom = top + half
                    let productRe = real[bottom] * twiddleRe - imaginary[bottom] * twiddleIm
                    let productIm = real[bottom] * twiddleIm + imaginary[bottom] * twiddleRe
                    real[bottom] = real[top] - productRe
                    imaginary[bottom] = imaginary[top] - productIm
                    real[top] += productRe
                    imaginary[top] += productIm
                }
                start += 2 * half
            }
            half *= 2
        }
    }
}
