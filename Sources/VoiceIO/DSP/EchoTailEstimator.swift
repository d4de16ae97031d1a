#if canImport(Glibc)
import Glibc
#endif

/// Estimates the echo a linear filter cannot model because the room rings longer than the filter: from the
/// filter's impulse response it fits the energy decay of its later part (tap energy per block, a straight line in
/// dB) and extrapolates it past the filter's end.
///
/// The result: `decayPerBlock`, how much the tail's energy falls from one block of lag to the next, and
/// `energyPastEnd`, the tap energy of the first block of lag beyond the filter. The echo the filter leaves in
/// a frequency bin is then Σⱼ energyPastEnd·decayPerBlockʲ·|X(n − filterBlocks − j)|², a sum the
/// `ResidualEchoSuppressor` keeps recursively.
///
/// `init` allocates; `update` is real-time safe.
public struct EchoTailEstimator {
    /// Frames per block (the segment length of the energy decay).
    public let blockFrameCount: Int
    /// Energy fall per block of lag, below `maximumDecayPerBlock` (0 while no decaying tail was found).
    public private(set) var decayPerBlock: Float = 0
    /// Tap energy of the first block past the filter's end (sum of squared taps, signal scale 1).
    public private(set) var energyPastEnd: Float = 0
    /// The slowest decay believed, RT60 of 3 s: taps that decay more slowly are the filter's noise floor,
    /// not a room.
    public let maximumDecayPerBlock: Float
    /// The last fit, significant or not: the energy fall per block and the tail's whole energy past the filter's end
    /// over the filter's (0 and 0 while the taps did not decay). `LongRoomWatch` reads them. Real-time safe.
    public private(set) var fittedDecayPerBlock: Float = 0, fittedTailShare: Float = 0

    private static var slowestReverberationSeconds: Double { 3 }
    /// The part of the response fitted: its last blocks, after the direct path and early reflections.
    private static var fittedFraction: Float { 0.6 }
    /// The tail past the filter counts when its energy reaches this fraction of the filter's (−20 dB).
    private static var significantTailFraction: Float { 0.01 }

    public init(sampleRate: Int, blockFrameCount: Int) {
        self.blockFrameCount = blockFrameCount
        maximumDecayPerBlock = Self.decayPerBlock(reverberationSeconds: Self.slowestReverberationSeconds,
                                                  sampleRate: sampleRate, blockFrameCount: blockFrameCount)
    }

    /// The energy fall per block of `blockFrameCount` frames in a room whose reverberation lasts `reverberationSeconds`
    /// (RT60: energy falls by 60 dB, a factor e^13.8). Real-time safe.
    public static func decayPerBlock(reverberationSeconds: Double, sampleRate: Int, blockFrameCount: Int) -> Float {
        Float(exp(-13.8 * Double(blockFrameCount) / (reverberationSeconds * Double(sampleRate))))
    }

    /// The reverberation time (RT60) in seconds of a room whose energy falls by `decayPerBlock` (0 < decay < 1) per
    /// block: the inverse of `decayPerBlock(reverberationSeconds:sampleRate:blockFrameCount:)`. Real-time safe.
    public static func reverberationSeconds(decayPerBlock: Float, sampleRate: Int, blockFrameCount: Int) -> Double {
        -13.8 * Double(blockFrameCount) / (Double(log(decayPerBlock)) * Double(sampleRate))
    }

    /// Fits the decay to `taps`, an impulse response of a whole number of blocks multiplied by `scale`, as
    /// `EchoCanceller.impulseResponse(into:)` gives it. Real-time safe.
    public mutating func update(taps: UnsafeBufferPointer<Int32>, scale tapScale: Float) {
        let blocks = taps.count / blockFrameCount
        let first = blocks - max(3, Int(Float(blocks) * Self.fittedFraction))
        guard first >= 0 else { return }
        // Least-squares line through (block, log energy) over the fitted blocks.
        var sumX: Float = 0, sumY: Float = 0, sumXX: Float = 0, sumXY: Float = 0, total: Float = 0
        let scale = 1 / (tapScale * tapScale)
        for block in 0..<blocks {
            var energy: Float = 0
            for index in (block * blockFrameCount)..<((block + 1) * blockFrameCount) {
                let tap = Float(taps[index])
                energy += tap * tap
            }
            total += energy * scale
            guard block >= first else { continue }
            let x = Float(block), y = log(max(energy * scale, 1e-20))
            sumX += x; sumY += y; sumXX += x * x; sumXY += x * y
        }
        let n = Float(blocks - first)
        let slope = (n * sumXY - sumX * sumY) / max(n * sumXX - sumX * sumX, 1e-9)
        let intercept = (sumY - slope * sumX) / n
        // Taps that do not decay are the filter's misadjustment floor: no room past its end to model.
        guard exp(slope) < maximumDecayPerBlock else {
            decayPerBlock = 0
            energyPastEnd = 0
            fittedDecayPerBlock = 0
            fittedTailShare = 0
            return
        }
        let decay = exp(slope)
        let pastEnd = exp(intercept + slope * Float(blocks - 1)) * decay
        fittedDecayPerBlock = decay
        fittedTailShare = pastEnd / (1 - decay) / max(total, 1e-30)
        // A tail far below the echo the filter models hides under the residual the filter itself leaves.
        let significant = fittedTailShare > Self.significantTailFraction
        decayPerBlock = significant ? decay : 0
        energyPastEnd = significant ? pastEnd : 0
    }
}
