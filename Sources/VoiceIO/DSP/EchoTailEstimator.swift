#if canImport(Glibc)
import Glibc
#endif

/// Estimates the echo a linear filter cannot model because the room rings longer than the filter: from the
/// filter's impulse response it fits the energy decay of its later part (tap energy per block, a straight line in
/// dB) and extrapolates it past the filter's end.
///
/// The result: `decayPerBlock`, how much the tail's energy falls from one block of lag to the next, and
/// `energyPastEnd`, the tap energy of the first block of lag beyond the filter. The echo the filter leaves in
/// a frequency bin is then Σⱼ energyPastEnd·decayPerBlockʲ·|X(n − tailStartBlocks − j)|², a sum the
/// `ResidualEchoSuppressor` keeps recursively.
///
/// A filter grown for a long room (`filterGrew`) starts its new taps from zero: until they learn the tail, the fit of
/// the shorter filter still tells the echo from its old end on, as far as the new taps have not taken it yet.
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
    /// Where the tail `energyPastEnd` and `decayPerBlock` describe starts, in blocks of lag: the filter's end, or the
    /// end it had before it grew, while its new taps have learned less of the tail there than the fit past its end.
    public private(set) var tailStartBlocks = 0
    /// The last fit's energy past the filter's end, significant or not (0 while the taps did not decay).
    private var fittedPastEnd: Float = 0
    /// The last fit before the filter grew: its length in blocks, energy past it and decay.
    private var shorterFit: (blocks: Int, energyPastEnd: Float, decayPerBlock: Float)?

    private static var slowestReverberationSeconds: Double { 3 }
    /// The part of the response fitted: its last blocks, after the direct path and early reflections.
    private static var fittedFraction: Float { 0.6 }
    /// The tail past the filter counts when its energy reaches this fraction of the filter's (−20 dB), or, where the
    /// filter leaves less, `leftoverTailFraction` of what it leaves, down to `smallestSignificantTailFraction` (−33 dB).
    private static var significantTailFraction: Float { 0.01 }
    /// A tail hides under the filter's leftover only well below it: the leftover the suppressor's ratios learn is a
    /// mean, the tail comes after the far end's loud passages, when the filter's echo estimate and with it the ratios'
    /// estimate have fallen. The public q06 (RT60 0.4 s past a 200 ms filter, 8 kHz voice), its filter leaving −24 dB
    /// and its tail fitted at −30 dB, had that tail taken for a talker after loud passages, and the suppression let go:
    /// far-end ERLE 38.7 dB (45.8 with the tail counted; 35.6 and 46.1 at 5 ms blocks). A filter that leaves much more
    /// hides such a tail: counted from −25 dB on whatever the filter left, hot-microphone g08's talker lost 2.8 dB.
    private static var leftoverTailFraction: Float { 1.0 / 4 }
    /// The floor is 3 dB under the q06 tail's −30 dB, which held it by 0.2 dB at −30: with its drift read 5 ppm closer
    /// (−52 ppm for −50, an experiment turning `DelayEstimator`'s averages with the drift), the filter left −26 dB, the
    /// tail, fitted 0.1 dB under −30, went uncounted, and the far-end ERLE fell to 34 dB (46 counted). Where a filter
    /// leaves more than −24 dB the floor does not bind; over our scenes only a louder-move scene at 5 ms blocks moved
    /// (v03, ERLE +2.2 dB).
    private static var smallestSignificantTailFraction: Float { 0.0005 }

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

    /// The filter grew from `blocks` blocks, its new taps at zero: the last fit stands for the tail past that end until
    /// they learn it, significant or not (the filter grows for a room found to ring past it: our reverberant r07's
    /// last fit held 0.85 % of the filter's energy, under the 1 % `energyPastEnd` counts from: ERLE 48.3 dB without
    /// it, 49.6 with). Real-time safe.
    public mutating func filterGrew(fromBlocks blocks: Int) {
        shorterFit = fittedPastEnd > 0 ? (blocks, fittedPastEnd, fittedDecayPerBlock) : nil
    }

    /// The filter starts over: the fit from before it grew no longer tells its path. Real-time safe.
    public mutating func forgetGrowth() { shorterFit = nil }

    /// Fits the decay to `taps`, an impulse response of a whole number of blocks multiplied by `scale`, as
    /// `EchoCanceller.impulseResponse(into:)` gives it. `filterLeftoverShare`: the filter's error over the microphone
    /// while the far end played alone, lately (nil: not measured). Real-time safe.
    public mutating func update(taps: UnsafeBufferPointer<Int32>, scale tapScale: Float,
                                filterLeftoverShare: Float? = nil) {
        let blocks = taps.count / blockFrameCount
        tailStartBlocks = blocks
        let first = blocks - max(3, Int(Float(blocks) * Self.fittedFraction))
        guard first >= 0 else { return }
        // Least-squares line through (block, log energy) over the fitted blocks.
        var sumX: Float = 0, sumY: Float = 0, sumXX: Float = 0, sumXY: Float = 0, total: Float = 0
        let scale = 1 / (tapScale * tapScale)
        for block in 0..<blocks {
            let energy = Self.energy(taps, frames: (block * blockFrameCount)..<((block + 1) * blockFrameCount))
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
            fittedPastEnd = 0
            keepShorterFit(taps: taps, scale: tapScale)
            return
        }
        let decay = exp(slope)
        let pastEnd = exp(intercept + slope * Float(blocks - 1)) * decay
        fittedDecayPerBlock = decay
        fittedPastEnd = pastEnd
        fittedTailShare = pastEnd / (1 - decay) / max(total, 1e-30)
        // A tail far below the echo the filter models hides under the residual the filter itself leaves.
        let leftoverFraction = filterLeftoverShare.map { max(Self.smallestSignificantTailFraction,
                                                             Self.leftoverTailFraction * $0) }
        let significant = fittedTailShare > min(Self.significantTailFraction, leftoverFraction ?? .infinity)
        decayPerBlock = significant ? decay : 0
        energyPastEnd = significant ? pastEnd : 0
        keepShorterFit(taps: taps, scale: tapScale)
    }

    /// After the filter grew: the share of the shorter fit's energy over the new taps that they have not learned yet,
    /// from the old end on, replaces the fit past the new end while it holds more (its whole tail summed). It fades as
    /// they learn and is not dropped for being small: the suppressor's ratios learn what it leaves, and dropped at
    /// once where it fell under a significant tail's share (`significantTailFraction`), the rest of the tail passed
    /// for a talker (our reverberant r12 at 5 ms blocks: 1.7 dB of ERLE lost).
    private mutating func keepShorterFit(taps: UnsafeBufferPointer<Int32>, scale tapScale: Float) {
        guard let shorter = shorterFit else { return }
        let blocks = taps.count / blockFrameCount
        guard blocks > shorter.blocks else { shorterFit = nil; return }
        let learned = Self.energy(taps, frames: (shorter.blocks * blockFrameCount)..<(blocks * blockFrameCount))
            / (tapScale * tapScale)
        let decay = shorter.decayPerBlock
        let expected = shorter.energyPastEnd * (1 - pow(decay, Float(blocks - shorter.blocks))) / (1 - decay)
        let unlearned = max(0, 1 - learned / expected)
        let fittedTotal = decayPerBlock > 0 ? energyPastEnd / (1 - decayPerBlock) : 0
        guard unlearned * shorter.energyPastEnd / (1 - decay) > fittedTotal else { shorterFit = nil; return }
        energyPastEnd = unlearned * shorter.energyPastEnd
        decayPerBlock = decay
        tailStartBlocks = shorter.blocks
    }

    /// The sum of the squared taps over `frames`. Real-time safe.
    private static func energy(_ taps: UnsafeBufferPointer<Int32>, frames: Range<Int>) -> Float {
        var energy: Float = 0
        for index in frames {
            let tap = Float(taps[index])
            energy += tap * tap
        }
        return energy
    }
}
