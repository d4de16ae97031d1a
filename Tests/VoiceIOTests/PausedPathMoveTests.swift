import Testing
@testable import VoiceIO

/// Blocks of energies as the suppressor measures them (10 ms blocks): the far end playing or not, the output's and the
/// microphone's energies, whether the filter is settled.
@Suite struct PausedPathMoveTests {
    /// Feeds `count` blocks; returns those (counted from 1) found to be the filter's error.
    static func errors(_ watch: inout PausedPathMove, count: Int, farEnd: Bool = true, output: Float,
                       microphone: Float = 1, settled: Bool = true) -> [Int] {
        (1...count).filter { _ in
            watch.observe(farEndActive: farEnd, outputEnergy: output, microphoneEnergy: microphone,
                          isFilterSettled: settled)
        }
    }

    @Test("after a far-end pause of 0.3 s an output 2 dB over the microphone is the filter's error, for 0.3 s")
    func louderOutputAfterPause() {
        var watch = PausedPathMove(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.errors(&watch, count: 30, farEnd: false, output: 0).isEmpty)
        #expect(Self.errors(&watch, count: 40, output: 1.6) == Array(1...30))
        // A far end that plays on judges nothing; a new pause and return judge again.
        #expect(Self.errors(&watch, count: 29, farEnd: false, output: 0).isEmpty)
        #expect(Self.errors(&watch, count: 10, output: 1.6).isEmpty)
        #expect(Self.errors(&watch, count: 30, farEnd: false, output: 0).isEmpty)
        #expect(Self.errors(&watch, count: 5, output: 1.6) == Array(1...5))
    }

    @Test("a talker's chance excess under 1 dB, a filter just restarted and an output quieter since the return are not")
    func notTheFiltersError() {
        var watch = PausedPathMove(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.errors(&watch, count: 30, farEnd: false, output: 0).isEmpty)
        #expect(Self.errors(&watch, count: 5, output: 1.2).isEmpty)
        #expect(Self.errors(&watch, count: 5, output: 1.6, settled: false).isEmpty)
        // Since the return the output sums to 15 (1.2 × 5 + 1.6 × 5 + 0.2 × 5) against the microphone's 15 × 1.12 =
        // 16.8: blocks of 2 count from the third, when the sum is over too.
        #expect(Self.errors(&watch, count: 5, output: 0.2).isEmpty)
        #expect(Self.errors(&watch, count: 15, output: 2) == Array(3...15))
    }

    @Test("a moved path's first blocks, as loud as the microphone, hold the sum back for a block, not four")
    func echoAsLoudAsTheMicrophoneFirst() {
        var watch = PausedPathMove(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.errors(&watch, count: 30, farEnd: false, output: 0).isEmpty)
        #expect(Self.errors(&watch, count: 5, output: 1).isEmpty)
        // The sum since the return after n blocks of 1.6: 5 + 1.6 n against 1.12 × (5 + n), over from n = 2 (at the
        // block's own 1 dB, 1.26 × (5 + n), it was over from n = 4).
        #expect(Self.errors(&watch, count: 10, output: 1.6) == Array(2...10))
    }
}
