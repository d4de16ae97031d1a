import Foundation
import VoiceIO

/// Helpers shared by the DSP and file tests.
enum DSPTestSupport {
    /// Runs all of `input` (mono) through `resampler` in blocks of `blockFrames`, checking that each block is
    /// consumed whole when the output is sized by `maximumOutputFrames`.
    static func resample(_ input: [Float], with resampler: Resampler, blockFrames: Int) -> (output: [Float], allConsumed: Bool) {
        var output: [Float] = []
        var allConsumed = true
        var scratch = [Float](repeating: 0, count: resampler.maximumOutputFrames(inputFrames: blockFrames))
        var start = 0
        while start < input.count {
            let end = min(start + blockFrames, input.count)
            let (consumed, produced) = input[start..<end].withUnsafeBufferPointer { block in
                scratch.withUnsafeMutableBufferPointer { resampler.process(input: block, output: $0) }
            }
            allConsumed = allConsumed && consumed == end - start
            output += scratch[0..<produced]
            start = end
        }
        return (output, allConsumed)
    }

    /// Full scale ±1 to Int16, clipping.
    static func int16(_ samples: [Float]) -> [Int16] {
        samples.map { Int16((max(-1, min(1, $0)) * 32767).rounded()) }
    }

    static func power(_ samples: ArraySlice<Int16>) -> Double {
        samples.reduce(0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))
    }

    /// 10·log10 of the power ratio `reference` / `residual`.
    static func reductionDB(reference: ArraySlice<Int16>, residual: ArraySlice<Int16>) -> Double {
        10 * log10(power(reference) / max(power(residual), 1e-9))
    }

    /// How far `got` is from `wanted`, frame by frame: 10·log10 of Σ(got − wanted)² over Σ wanted² (the shorter's
    /// frames).
    static func mismatchDB(_ got: ArraySlice<Float>, _ wanted: ArraySlice<Float>) -> Double {
        var error = 0.0, energy = 0.0
        for (value, target) in zip(got, wanted) {
            error += Double(value - target) * Double(value - target)
            energy += Double(target) * Double(target)
        }
        return 10 * log10(error / energy)
    }
}
