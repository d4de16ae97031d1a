import Foundation
import Testing
@testable import VoiceIO

@Suite struct LowDelayWindowsTests {
    /// Overlap-add at a hop of one block gives the input back: in the last two blocks, where the synthesis window is,
    /// the products of the two windows a block apart sum to 1 at every frame; before them the synthesis is zero.
    @Test(arguments: [(80, 2), (80, 4), (160, 2), (40, 8), (60, 3)])
    func reconstructsOneBlockLate(blockFrameCount: Int, blockCount: Int) {
        let windows = LowDelayWindows(blockFrameCount: blockFrameCount, blockCount: blockCount)
        let h = blockFrameCount, first = windows.frameCount - 2 * h
        var worst: Float = 0
        for i in 0..<h {
            let sum = windows.analysis[first + i] * windows.synthesis[first + i]
                + windows.analysis[first + h + i] * windows.synthesis[first + h + i]
            worst = max(worst, abs(sum - 1))
        }
        #expect(worst < 1e-5, "overlap-add off by \(worst)")
        #expect((0..<first).allSatisfy { windows.synthesis[$0] == 0 })
        #expect((0..<windows.frameCount).allSatisfy { windows.analysis[$0] > 0 && windows.analysis[$0] <= 1 })
    }

    /// Two blocks are the symmetric sine window, for analysis and synthesis alike, whose energy is one block: the
    /// spectrum of 10 ms blocks and its comfort noise's scale as before the windows grew at 5 ms blocks.
    @Test func twoBlocksAreTheSineWindow() {
        let windows = LowDelayWindows(blockFrameCount: 160, blockCount: 2)
        for n in 0..<320 {
            let sine = Float(sin(Double.pi * (Double(n) + 0.5) / 320))
            #expect(windows.analysis[n] == sine)
            #expect(abs(windows.synthesis[n] - sine) <= sine.ulp)
        }
        #expect(abs(windows.analysisEnergy - 160) < 1e-9 && abs(windows.synthesisEnergy - 160) < 1e-9)
        #expect(windows.generatedPowerScale(transformLength: 512) == Float(512) / 160)
    }

    /// Four 5 ms blocks: the analysis spans 20 ms (the energy of two blocks: 1.5 over the rise, 0.5 over the fall), the
    /// synthesis 10 ms with less energy than a block (Hann over the analysis where it rises: 70.7 frames' worth), so
    /// the generated spectrum is scaled up by more than the transform over the analysis energy.
    @Test func fourBlocksAnalyseTwentyMilliseconds() {
        let windows = LowDelayWindows(blockFrameCount: 80, blockCount: 4)
        #expect(windows.frameCount == 320)
        #expect(abs(windows.analysisEnergy - 160) < 1e-6)
        #expect(abs(windows.synthesisEnergy - 70.68) < 0.01)
        #expect(windows.generatedPowerScale(transformLength: 512) > Float(512) / 160 * 1.13)
        #expect(windows.analysis[239] > 0.99 && windows.analysis[0] < 0.01 && windows.analysis[319] < 0.01)
    }
}
