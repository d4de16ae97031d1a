import Testing
@testable import VoiceIO

@Suite struct LeakedEchoWatchTests {
    /// Feeds `blocks` blocks of one kind (10 ms blocks) and returns how many were taken for leaked echo.
    static func leaked(_ watch: inout LeakedEchoWatch, blocks: Int, ratio: Float, farEndActive: Bool = true,
                       isNearEndQuiet: Bool = false) -> Int {
        (0..<blocks).filter { _ in
            watch.observe(leakedEchoToErrorRatio: ratio, farEndActive: farEndActive, isNearEndQuiet: isNearEndQuiet)
        }.count
    }

    @Test("leaked echo is found only once the detector has not found the near end quiet for a second")
    func waitsForTheDeadlock() {
        var watch = LeakedEchoWatch(rate: BlockRate(blocksPerSecond: 100))
        // A talker's first words after far-end single talk: the error is still leaked echo, but not for long enough.
        #expect(Self.leaked(&watch, blocks: 100, ratio: 5) == 0)
        // Past the second: found on every block whose leaked echo is 3 times its error or more.
        #expect(Self.leaked(&watch, blocks: 50, ratio: 5) == 50)
        #expect(Self.leaked(&watch, blocks: 10, ratio: 2) == 0)
        // A quiet near end (far-end single talk for sure) starts the wait over.
        #expect(Self.leaked(&watch, blocks: 1, ratio: 5, isNearEndQuiet: true) == 0)
        #expect(Self.leaked(&watch, blocks: 100, ratio: 5) == 0)
    }

    @Test("a talker's blocks, in which leaked echo is rarely more than the error, are not found")
    func talkerIsNotLeakedEcho() {
        var watch = LeakedEchoWatch(rate: BlockRate(blocksPerSecond: 100))
        // One far-end block in five with 5 times more leaked echo than error (a talker's pauses): the share stays low.
        let found = (0..<400).filter { block in
            watch.observe(leakedEchoToErrorRatio: block % 5 == 0 ? 5 : 0.1, farEndActive: true, isNearEndQuiet: false)
        }.count
        #expect(found == 0)
        // Blocks without the far end count for nothing.
        #expect(Self.leaked(&watch, blocks: 200, ratio: 5, farEndActive: false) == 0)
    }
}
