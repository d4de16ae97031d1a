import Foundation
import Testing
@testable import VoiceIO

/// Sequences shaped after our reverberant r02 (`UnheardTalkerWatch`): in the far end's single talk the filter's output
/// holds −16 dB of the microphone and its leaked echo stands at about its error; under the talker the detector does not
/// hear, −6 dB and 0.1.
@Suite struct UnheardTalkerWatchTests {
    /// Feeds `blocks` 10 ms blocks of one kind and returns how many were taken for an unheard talker's. The near end
    /// counts as quiet where the far end plays alone, unless `isNearEndQuiet` says otherwise; `explainedShare`: the
    /// second linear stage's share of the output.
    static func flagged(_ watch: inout UnheardTalkerWatch, blocks: Int, shareDecibels: Float, leakRatio: Float,
                        isFarEndAlone: Bool, isNearEndQuiet: Bool? = nil, explainedShare: Float = 0,
                        isRoomRingingLong: Bool = true, wanderDecibels: Float = 1.5) -> Int {
        (0..<blocks).filter { block in
            // The share wanders by ±`wanderDecibels` from block to block, as a smoothed leftover does.
            let wander = block % 2 == 0 ? wanderDecibels : -wanderDecibels
            return watch.observe(outputShare: pow(10, (shareDecibels + wander) / 10), leakedEchoToErrorRatio: leakRatio,
                                 isFarEndAlone: isFarEndAlone, isNearEndQuiet: isNearEndQuiet ?? isFarEndAlone,
                                 leftoverExplainedShare: explainedShare, isRoomRingingLong: isRoomRingingLong)
        }.count
    }

    @Test("a talker who raises the filter's unexplained share 10 dB over its norm is taken for one")
    func talkerOverTheNorm() {
        var watch = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.flagged(&watch, blocks: 300, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true) == 0)
        // The detector hears no talker (the near end stays "quiet"); the watch does, on every block once the leak
        // ratio's 100 ms average has fallen under 1 (two blocks).
        let heard = Self.flagged(&watch, blocks: 400, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: true)
        #expect(heard >= 395, "\(heard) of the talker's 400 blocks taken for a talker's")
        // The flagged blocks did not move the norm: back at the far end's share, nothing is flagged.
        #expect(Self.flagged(&watch, blocks: 100, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true) == 0)
        // 4 dB over the norm (2.5 to 5.5 with the wander) is the leftover's own, not a talker.
        #expect(Self.flagged(&watch, blocks: 100, shareDecibels: -12, leakRatio: 0.1, isFarEndAlone: true) == 0)
    }

    /// A talker whose first second stays under the bar (4 dB over the norm, as a far-speaker room's talker 5 dB under
    /// the echo may start) moves the norm by 0.4 dB (ten seconds' rate), and its louder words after it (7 dB over the
    /// old norm) are taken for a talker's; a norm that followed it within a second stood 2.5 dB higher and left them all
    /// for echo (our far-speaker f11 with its talker 90 ms later: unheard for its whole double talk).
    @Test func aTalkerUnderTheBarAtFirstDoesNotBecomeTheNorm() {
        var watch = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        func flagged(blocks: Int, shareDecibels: Float, leakRatio: Float) -> Int {
            Self.flagged(&watch, blocks: blocks, shareDecibels: shareDecibels, leakRatio: leakRatio, isFarEndAlone: true,
                         wanderDecibels: 0.5)
        }
        #expect(flagged(blocks: 300, shareDecibels: -16, leakRatio: 1.3) == 0)
        #expect(flagged(blocks: 100, shareDecibels: -12, leakRatio: 0.1) == 0)
        let heard = flagged(blocks: 100, shareDecibels: -9, leakRatio: 0.1)
        #expect(heard == 100, "\(heard) of the louder words' 100 blocks taken for a talker's")
        // Far-end single talk again at the old share: nothing is flagged.
        #expect(flagged(blocks: 100, shareDecibels: -16, leakRatio: 1.3) == 0)
    }

    @Test("output the filter finds leaked (a moved path), a room that does not ring long, or no norm yet: no talker")
    func leakedEchoAndShortRooms() {
        var watch = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        // Too little single talk for a norm.
        #expect(Self.flagged(&watch, blocks: 40, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true) == 0)
        #expect(Self.flagged(&watch, blocks: 20, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: false) == 0)
        #expect(Self.flagged(&watch, blocks: 300, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true) == 0)
        // A path that moved: the share rises as much, but the filter finds its output leaked echo (the leak ratio's
        // 100 ms average needs a few blocks to rise past 1: the first ones count).
        let moved = Self.flagged(&watch, blocks: 300, shareDecibels: -6, leakRatio: 5, isFarEndAlone: true)
        #expect(moved <= 3, "\(moved) blocks of a moved path's leaked echo taken for a talker")
        var shortRoom = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        _ = Self.flagged(&shortRoom, blocks: 300, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true,
                         isRoomRingingLong: false)
        #expect(Self.flagged(&shortRoom, blocks: 300, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: true,
                             isRoomRingingLong: false) == 0)
        // A filter that starts over forgets the norm.
        var restarted = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        _ = Self.flagged(&restarted, blocks: 300, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true)
        restarted.restart()
        #expect(Self.flagged(&restarted, blocks: 100, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: false) == 0)
    }

    /// A filter that starts over under a talker (`restart(keepingNorm:)`, as `EchoPipeline` does where the ratios to
    /// the reference are kept): the talker is still taken for one against the old norm, except where the second linear
    /// stage explains over half the output (the echo's leftover after the talk); once the near end is quiet the norm
    /// is gone, as after any restart.
    @Test func aNormKeptThroughARestartUnderATalker() {
        var watch = UnheardTalkerWatch(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.flagged(&watch, blocks: 300, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: true) == 0)
        watch.restart(keepingNorm: true)
        let heard = Self.flagged(&watch, blocks: 100, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: false)
        #expect(heard >= 95, "\(heard) of the talker's 100 blocks after the restart taken for a talker's")
        let explained = Self.flagged(&watch, blocks: 100, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: false,
                                     explainedShare: 0.8)
        #expect(explained == 0, "\(explained) blocks the second stage explains taken for a talker's")
        _ = Self.flagged(&watch, blocks: 1, shareDecibels: -16, leakRatio: 1.3, isFarEndAlone: false,
                         isNearEndQuiet: true)
        #expect(Self.flagged(&watch, blocks: 100, shareDecibels: -6, leakRatio: 0.1, isFarEndAlone: false) == 0)
    }
}
