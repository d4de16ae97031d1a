#if canImport(Glibc)
import Glibc
#endif

/// The analysis and synthesis windows of a short-time spectrum whose analysis spans more blocks than its output lags:
/// the analysis window covers `blockCount` blocks, the synthesis window only the last two, so that overlap-add at a hop
/// of one block completes each block one block late, however long the analysis (a low-delay asymmetric pair, after
/// Mauler and Martin).
///
/// The analysis window rises as a sine over all but the last block and falls as a sine over the last; the synthesis
/// window is zero before the last two blocks, and their product there is a Hann window two blocks long, whose copies a
/// block apart sum to 1: the output is the input, one block late, where nothing is changed. Two blocks make the
/// symmetric sine window, the same for analysis and synthesis.
///
/// `init` allocates; the rest is read-only.
final class LowDelayWindows {
    /// Blocks the analysis window spans (at least 2).
    let blockCount: Int
    /// Frames per block: the hop.
    let blockFrameCount: Int
    /// `blockCount` × `blockFrameCount` frames.
    var frameCount: Int { blockCount * blockFrameCount }
    /// `frameCount` analysis weights, oldest frame first.
    let analysis: UnsafeMutablePointer<Float>
    /// `frameCount` synthesis weights, zero but for the last two blocks.
    let synthesis: UnsafeMutablePointer<Float>
    /// Σ analysis²: the power a bin of white noise of unit power reads.
    let analysisEnergy: Double
    /// Σ synthesis² over the window, `blockFrameCount` for the symmetric pair.
    let synthesisEnergy: Double

    /// Not real-time safe (allocates).
    init(blockFrameCount: Int, blockCount: Int) {
        precondition(blockFrameCount > 0 && blockCount >= 2, "LowDelayWindows needs blocks of frames, at least two")
        self.blockCount = blockCount
        self.blockFrameCount = blockFrameCount
        let h = blockFrameCount, count = blockCount * blockFrameCount, rise = count - h
        analysis = .allocate(capacity: count)
        synthesis = .allocate(capacity: count)
        // Sines through the frames' centres: rising over `rise` frames, falling over the last block.
        func analysisWeight(_ n: Int) -> Double {
            n < rise ? sin(Double.pi * (Double(n) + 0.5) / Double(2 * rise))
                     : sin(Double.pi * (Double(n - rise + h) + 0.5) / Double(2 * h))
        }
        var analysisSum = 0.0, synthesisSum = 0.0
        for n in 0..<count {
            let weight = analysisWeight(n)
            analysis[n] = Float(weight)
            analysisSum += weight * weight
            let m = n - (count - 2 * h)
            guard m >= 0 else {
                synthesis[n] = 0
                continue
            }
            let hannRoot = sin(Double.pi * (Double(m) + 0.5) / Double(2 * h))
            let synthesisWeight = m < h ? hannRoot * hannRoot / weight : hannRoot
            synthesis[n] = Float(synthesisWeight)
            synthesisSum += synthesisWeight * synthesisWeight
        }
        analysisEnergy = analysisSum
        synthesisEnergy = synthesisSum
    }

    deinit {
        analysis.deallocate()
        synthesis.deallocate()
    }

    /// How much louder a spectrum must be generated than the analysed one reads so that, transformed back with
    /// `transformLength` points and overlap-added through `synthesis`, its frames have the analysed signal's power:
    /// transform length / Σ analysis², times a block over Σ synthesis² (each output frame takes the squared synthesis
    /// weights of the blocks that overlap it, `synthesisEnergy` / `blockFrameCount` on average).
    func generatedPowerScale(transformLength: Int) -> Float {
        Float(Double(transformLength) / analysisEnergy * Double(blockFrameCount) / synthesisEnergy)
    }
}
