import Foundation
import Testing
@testable import VoiceIO

/// Sequences shaped after our far-speaker f11 and long-tailed p07 (`UnexplainedOutputWatch`): in the far end's single
/// talk the second linear stage's estimate stands about 1 dB over the output and the coherent part 15 dB under it;
/// under a talker the estimate stands 12 dB under the output and the coherent part 25 dB under; after a path moved
/// unnoticed the estimate stands 14 dB under and the coherent part 8 dB under.
@Suite struct UnexplainedOutputWatchTests {
    /// Feeds `blocks` 10 ms blocks (output power 1, noise 0.01) and returns how many were taken for a talker's.
    static func flagged(_ watch: inout UnexplainedOutputWatch, blocks: Int, stagedDecibels: Float,
                        coherentDecibels: Float, farEndActive: Bool = true, isNearEndQuiet: Bool = true,
                        isJudged: Bool = true) -> Int {
        (0..<blocks).filter { block in
            // The stage's estimate wanders by ±1.5 dB from block to block.
            let wander: Float = block % 2 == 0 ? 1.5 : -1.5
            return watch.observe(outputPower: 1, stagedEchoPower: pow(10, (stagedDecibels + wander) / 10),
                                 coherentEchoPower: pow(10, coherentDecibels / 10), noisePower: 0.01,
                                 farEndActive: farEndActive, isNearEndQuiet: isNearEndQuiet, isJudged: isJudged)
        }.count
    }

    static func learned() -> UnexplainedOutputWatch {
        var watch = UnexplainedOutputWatch(rate: BlockRate(blocksPerSecond: 100))
        #expect(flagged(&watch, blocks: 300, stagedDecibels: 1, coherentDecibels: -15) == 0)
        return watch
    }

    @Test("a talker the stage does not explain is taken for one; the far end's single talk is not")
    func talkerTheStageDoesNotExplain() {
        var watch = Self.learned()
        // 6 dB under the output is the leftover's own wander, not a talker.
        #expect(Self.flagged(&watch, blocks: 50, stagedDecibels: -6, coherentDecibels: -25) == 0)
        // The averages take a few blocks to fall 8 dB.
        let heard = Self.flagged(&watch, blocks: 100, stagedDecibels: -12, coherentDecibels: -25, isNearEndQuiet: false)
        #expect(heard >= 95, "\(heard) of the talker's 100 blocks taken for a talker's")
    }

    @Test("a moved path's output, coherent with the estimate, is no talker; nor once the norm followed it")
    func movedPath() {
        var watch = Self.learned()
        #expect(Self.flagged(&watch, blocks: 200, stagedDecibels: -14, coherentDecibels: -8) == 0)
        // The coherent part fades as the far end's phrase ends; the norm stands at the moved path's ratio by then.
        #expect(Self.flagged(&watch, blocks: 100, stagedDecibels: -14, coherentDecibels: -25) == 0)
        // Without the norm (a watch that learned no single talk), the same blocks pass for a talker.
        var unlearned = UnexplainedOutputWatch(rate: BlockRate(blocksPerSecond: 100))
        _ = Self.flagged(&unlearned, blocks: 200, stagedDecibels: -14, coherentDecibels: -8, isNearEndQuiet: false)
        let passed = Self.flagged(&unlearned, blocks: 100, stagedDecibels: -14, coherentDecibels: -25,
                                  isNearEndQuiet: false)
        #expect(passed >= 95, "\(passed) of 100 blocks taken for a talker's without a norm")
    }

    @Test("a stage that has not learned a second of far end, a block not judged, or the far end silent: no talker")
    func onlyALearnedStageJudges() {
        var fresh = UnexplainedOutputWatch(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.flagged(&fresh, blocks: 90, stagedDecibels: -12, coherentDecibels: -25) == 0)
        var watch = Self.learned()
        #expect(Self.flagged(&watch, blocks: 100, stagedDecibels: -12, coherentDecibels: -25, isJudged: false) == 0)
        #expect(Self.flagged(&watch, blocks: 100, stagedDecibels: -12, coherentDecibels: -25, farEndActive: false) == 0)
        watch.restart()
        #expect(Self.flagged(&watch, blocks: 90, stagedDecibels: -12, coherentDecibels: -25) == 0)
    }
}
