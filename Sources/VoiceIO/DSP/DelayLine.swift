#if canImport(Glibc)
import Glibc
#endif

/// Delays a mono stream by a fractional number of frames that may change between blocks, so the echo
/// reference can follow a drifting clock smoothly instead of jumping a frame at a time.
///
/// Fractional positions are read with a 16-tap Kaiser-windowed sinc (256 tabulated phases, nearest phase),
/// flat to within 0.1 dB up to 0.4 × the sample rate; the smallest delay it can produce is
/// `minimumDelayFrames` (half the interpolator), smaller requests are clamped to it. Storage is allocated once
/// in `init` for delays up to `maximumDelayFrames` and blocks up to `maximumBlockFrames`; every frame is stored
/// twice, `capacity` apart, so the taps of any output frame are one contiguous run. Frames older than the
/// first one written read as silence. `process`, `write` and `reset` are real-time safe; one thread at a time.
public final class DelayLine {
    public let maximumDelayFrames: Int
    public let maximumBlockFrames: Int
    /// Shortest delay the interpolator can produce, in frames.
    public static var minimumDelayFrames: Double { Double(tapCount / 2 - 1) }

    private static var tapCount: Int { 16 }
    private static var phaseCount: Int { 256 }
    private let capacity: Int
    private let storage: UnsafeMutablePointer<Float>
    /// `phaseCount + 1` rows of `tapCount` coefficients; row p interpolates at fraction p / phaseCount.
    private let coefficients: UnsafeMutablePointer<Float>
    /// Total frames written so far (the newest frame is `written - 1`).
    private var written = 0

    /// Not real-time safe (allocates).
    public init(maximumDelayFrames: Int, maximumBlockFrames: Int) {
        precondition(maximumDelayFrames >= 0 && maximumBlockFrames > 0, "delay line sizes out of range")
        self.maximumDelayFrames = maximumDelayFrames
        self.maximumBlockFrames = maximumBlockFrames
        capacity = maximumDelayFrames + maximumBlockFrames + Self.tapCount + 1
        storage = .allocate(capacity: 2 * capacity)
        storage.initialize(repeating: 0, count: 2 * capacity)
        let taps = Self.tapCount, phases = Self.phaseCount
        coefficients = .allocate(capacity: (phases + 1) * taps)
        let beta = 6.0
        func besselI0(_ x: Double) -> Double {
            var sum = 1.0, term = 1.0
            for k in 1..<30 {
                term *= (x / (2 * Double(k))) * (x / (2 * Double(k)))
                sum += term
            }
            return sum
        }
        for phase in 0...phases {
            let fraction = Double(phase) / Double(phases)
            var total = 0.0
            var row = [Double](repeating: 0, count: taps)
            for tap in 0..<taps {
                // Tap j weighs the frame (j - taps/2 + 1) frames before the integer read position, which lies
                // t frames from the interpolated one.
                let t = Double(tap - taps / 2 + 1) - fraction
                let sinc = t == 0 ? 1 : sin(Double.pi * t) / (Double.pi * t)
                let r = t / (Double(taps) / 2)
                let window = abs(r) < 1 ? besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta) : 0
                row[tap] = sinc * window
                total += row[tap]
            }
            // Stored oldest frame first, to run alongside the storage.
            for tap in 0..<taps { coefficients[phase * taps + taps - 1 - tap] = Float(row[tap] / total) }
        }
    }

    deinit {
        storage.deallocate()
        coefficients.deallocate()
    }

    /// Writes `input` and fills `output` (same count, at most `maximumBlockFrames`) with the stream as it was
    /// `delayFrames` frames earlier (clamped to `minimumDelayFrames`...`maximumDelayFrames`). `output` may
    /// alias `input`. Real-time safe.
    public func process(_ input: UnsafeBufferPointer<Float>, into output: UnsafeMutableBufferPointer<Float>,
                        delayFrames: Double) {
        let count = min(input.count, output.count, maximumBlockFrames)
        let delay = min(max(delayFrames.isFinite ? delayFrames : 0, Self.minimumDelayFrames),
                        Double(maximumDelayFrames))
        let base = written
        write(UnsafeBufferPointer(rebasing: input[..<count]))
        let whole = Int(delay.rounded(.down))
        let phase = Int(((delay - Double(whole)) * Double(Self.phaseCount)).rounded())
        let taps = Self.tapCount
        let row = coefficients + phase * taps
        // Output frame n is x(n - whole - fraction): taps cover n - whole - taps/2 up to n - whole + taps/2 - 1.
        var oldest = ((base - whole - taps / 2) % capacity + capacity) % capacity
        for index in 0..<count {
            let run = storage + oldest
            var sum: Float = 0
            for tap in 0..<taps { sum += row[tap] * run[tap] }
            output[index] = sum
            oldest = oldest + 1 == capacity ? 0 : oldest + 1
        }
    }

    /// Writes `input` (at most `maximumBlockFrames`) without reading: keeps the history current while nobody
    /// needs the delayed stream (e.g. while processing is bypassed). Real-time safe.
    public func write(_ input: UnsafeBufferPointer<Float>) {
        let count = min(input.count, maximumBlockFrames)
        var position = written % capacity
        for index in 0..<count {
            storage[position] = input[index]
            storage[position + capacity] = input[index]
            position = position + 1 == capacity ? 0 : position + 1
        }
        written += count
    }

    /// Forgets the stream: everything reads as silence again. Real-time safe.
    public func reset() {
        storage.update(repeating: 0, count: 2 * capacity)
        written = 0
    }
}
