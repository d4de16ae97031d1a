/// Tracks the noise floor of a signal per frequency bin and fills what a suppressor removed with noise of the
/// same spectrum, so heavy suppression never leaves a dead line.
///
/// The power is first smoothed over a few frames; the floor follows the smoothed power down quickly and
/// rises slowly (about 1 dB a second at 100 frames a second), so speech and echo do not lift it; a fixed
/// factor corrects the minimum's bias below the mean. Generated noise has the floor's magnitude
/// scaled by √(1 − g²) for a bin suppressed to gain g, and a random phase from a fixed-seed generator.
///
/// `init` allocates; `track`, `add` and `noisePower` are real-time safe.
public final class ComfortNoise {
    /// Bins per spectrum.
    public let binCount: Int
    /// Estimated noise power per bin, in the units of the powers given to `track`.
    public let noisePower: UnsafeMutablePointer<Float>
    private let smoothedPower: UnsafeMutablePointer<Float>
    private let minimumPower: UnsafeMutablePointer<Float>
    private var initialised = false
    private var state: UInt64 = 0x2545_F491_4F6C_DD1D

    private static var risePerFrame: Float { 1.0025 }
    private static var fallWeight: Float { 0.3 }
    private static var smoothingWeight: Float { 0.3 }
    /// Mean over tracked minimum of smoothed noise power, measured on white noise.
    private static var minimumBias: Float { 2 }

    /// `binCount`: bins per spectrum. Not real-time safe.
    public init(binCount: Int) {
        precondition(binCount > 0, "ComfortNoise needs at least one bin")
        self.binCount = binCount
        noisePower = .allocate(capacity: binCount)
        noisePower.initialize(repeating: 0, count: binCount)
        smoothedPower = .allocate(capacity: binCount)
        smoothedPower.initialize(repeating: 0, count: binCount)
        minimumPower = .allocate(capacity: binCount)
        minimumPower.initialize(repeating: 0, count: binCount)
    }

    deinit {
        noisePower.deallocate()
        smoothedPower.deallocate()
        minimumPower.deallocate()
    }

    /// Updates the floor with one frame's power spectrum (`binCount` values). Real-time safe.
    public func track(power: UnsafePointer<Float>) {
        if !initialised {
            smoothedPower.update(from: power, count: binCount)
            minimumPower.update(from: power, count: binCount)
            initialised = true
        }
        for k in 0..<binCount {
            let p = smoothedPower[k] + Self.smoothingWeight * (power[k] - smoothedPower[k])
            smoothedPower[k] = p
            let m = minimumPower[k]
            minimumPower[k] = p < m ? m + Self.fallWeight * (p - m) : max(m * Self.risePerFrame, 1e-20)
            noisePower[k] = Self.minimumBias * minimumPower[k]
        }
    }

    /// Adds noise to a spectrum whose bins were scaled by `gains` (0 ... 1): each bin gets the floor's
    /// amplitude times √(1 − g²) (the powers are |X|² of the same spectrum). Real-time safe.
    public func add(toReal real: UnsafeMutablePointer<Float>, imaginary: UnsafeMutablePointer<Float>,
                    gains: UnsafePointer<Float>) {
        for k in 0..<binCount {
            let g = min(1, max(0, gains[k]))
            let amplitude = (noisePower[k] * (1 - g * g)).squareRoot()
            // Two uniform values in -1 ... 1 have mean power 2/3 together; √1.5 makes the bin's power right.
            real[k] += amplitude * 1.2247 * uniform()
            imaginary[k] += amplitude * 1.2247 * uniform()
        }
    }

    private func uniform() -> Float {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Float(Int32(truncatingIfNeeded: state)) / Float(Int32.max)
    }
}
