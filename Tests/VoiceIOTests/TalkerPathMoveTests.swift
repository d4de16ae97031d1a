import Testing
@testable import VoiceIO

/// Blocks of energies made from a talker's (in every error, uncorrelated with the echo), the echo's, and the two filters'
/// misadjustments (what each leaves of the echo), as `BlockAdaptiveFilter` measures them.
@Suite struct TalkerPathMoveTests {
    struct Block {
        var talker: Float = 1
        var echo: Float = 1
        /// What the foreground leaves of the echo, and its estimate's energy.
        var foregroundLeft: Float
        var foregroundEstimate: Float = 1
        /// What the shadow leaves, and the energy of the difference between the two estimates.
        var shadowLeft: Float
        var difference: Float
        var isTalkerHeardLong = true
        var isTalkerHeard = true
    }

    /// A path gone: the foreground's estimate (of the old path, as loud as the new echo and unlike it) leaves twice
    /// the echo; the shadow, half way to the new path, leaves half of it.
    static let moved = Block(foregroundLeft: 2, shadowLeft: 0.5, difference: 2.5)
    /// A talker's onset over a foreground that cancels (20 dB): the shadow, pulled by the talker, leaves more.
    static let onset = Block(foregroundLeft: 0.01, foregroundEstimate: 0.99, shadowLeft: 0.3, difference: 0.31)
    /// A foreground lagging a drifting path (7 dB), the shadow half way along: the shadow better by more than the
    /// difference, but the foreground still explains its estimate.
    static let lagging = Block(foregroundLeft: 0.2, foregroundEstimate: 0.85, shadowLeft: 0.05, difference: 0.05)

    /// Feeds `count` far-end blocks of `block`; returns the blocks (counted from 1) on which the shadow took over.
    static func takeovers(_ watch: inout TalkerPathMove, _ block: Block, count: Int) -> [Int] {
        (1...count).filter { _ in
            watch.observe(microphone: block.talker + block.echo, foregroundError: block.talker + block.foregroundLeft,
                          shadowError: block.talker + block.shadowLeft, foregroundEstimate: block.foregroundEstimate,
                          estimateDifference: block.difference, hasLostPath: true, farEndPlays: true,
                          isTalkerHeard: block.isTalkerHeard, isTalkerHeardLong: block.isTalkerHeardLong)
        }
    }

    /// From a talker's double talk, the averages turn in 0.2 s (0.36 of their start left), and the run takes 0.1 s: the
    /// move is found 0.3 s after it (dt-change t01: 0.32 s). From the moved path's own figures, after the run alone.
    @Test("a path that moved under a talker heard for a second is found within 0.3 s, at 10 and 5 ms blocks")
    func movedUnderTalker() {
        var watch = TalkerPathMove(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&watch, Self.onset, count: 100).isEmpty)
        #expect(Self.takeovers(&watch, Self.moved, count: 40).first.map { $0 >= 28 && $0 <= 32 } == true)
        var fine = TalkerPathMove(rate: BlockRate(blocksPerSecond: 200))
        #expect(Self.takeovers(&fine, Self.moved, count: 20) == [20])
        // Once the shadow took over, a run starts again.
        fine.shadowTookOver()
        #expect(Self.takeovers(&fine, Self.moved, count: 20) == [20])
    }

    @Test("a talker's onset and a foreground that lags a drifting path are no moved path")
    func onsetAndLagAreNoMove() {
        var watch = TalkerPathMove(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&watch, Self.onset, count: 300).isEmpty)
        #expect(Self.takeovers(&watch, Self.lagging, count: 300).isEmpty)
    }

    @Test("a path that moves where no talker has been heard for a second is left to the other watchers")
    func noTalkerHeardLong() {
        var watch = TalkerPathMove(rate: BlockRate(blocksPerSecond: 100))
        var fresh = Self.moved
        fresh.isTalkerHeardLong = false
        #expect(Self.takeovers(&watch, fresh, count: 300).isEmpty)
        var unheard = Self.moved
        unheard.isTalkerHeard = false
        #expect(Self.takeovers(&watch, unheard, count: 300).isEmpty)
        // A block that breaks the run starts the count again.
        #expect(Self.takeovers(&watch, Self.moved, count: 9).isEmpty)
        #expect(Self.takeovers(&watch, unheard, count: 1).isEmpty)
        #expect(Self.takeovers(&watch, Self.moved, count: 10) == [10])
    }
}
