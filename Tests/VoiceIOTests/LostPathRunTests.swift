import Testing
@testable import VoiceIO

@Suite struct LostPathRunTests {
    /// Feeds `blocks` far-end blocks (10 ms) with the foreground's smoothed error at `foreground` times the
    /// microphone's power and the shadow's error at `shadow` times the foreground's; returns the blocks (counted from 1)
    /// on which the shadow took over.
    static func takeovers(_ run: inout LostPathRun, blocks: Int, foreground: Float, shadow: Float,
                          farEndPlays: Bool = true) -> [Int] {
        (1...blocks).filter { _ in
            run.observe(smoothedForegroundError: foreground, smoothedMicrophone: 1, hasLostPath: foreground > 0.5,
                        farEndPlays: farEndPlays, shadowError: shadow * foreground, foregroundError: foreground)
        }
    }

    @Test("a path lost just after the filter cancelled well, the shadow 1 dB ahead, is found moved per 0.3 s of far end")
    func movedPath() {
        var run = LostPathRun(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&run, blocks: 50, foreground: 0.01, shadow: 4).isEmpty)
        // Far-end pauses in the run do not count towards its window.
        #expect(Self.takeovers(&run, blocks: 10, foreground: 0.9, shadow: 0.7).isEmpty)
        #expect(Self.takeovers(&run, blocks: 5, foreground: 0.9, shadow: 0.7, farEndPlays: false).isEmpty)
        #expect(Self.takeovers(&run, blocks: 25, foreground: 0.9, shadow: 0.7) == [20])
    }

    @Test("a path lost at the far end's return from a pause, however long, starts a run")
    func pathLostAfterPause() {
        var run = LostPathRun(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&run, blocks: 50, foreground: 0.01, shadow: 4).isEmpty)
        // A 0.5 s pause in which the error and the microphone are both the room's noise (the path looks lost).
        #expect(Self.takeovers(&run, blocks: 50, foreground: 0.9, shadow: 1, farEndPlays: false).isEmpty)
        #expect(Self.takeovers(&run, blocks: 40, foreground: 0.9, shadow: 0.7) == [30])
        // Nor does a pause in which the error stays low (the path not lost) end the time to start one.
        var quiet = LostPathRun(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&quiet, blocks: 50, foreground: 0.01, shadow: 4).isEmpty)
        #expect(Self.takeovers(&quiet, blocks: 50, foreground: 0.01, shadow: 4, farEndPlays: false).isEmpty)
        #expect(Self.takeovers(&quiet, blocks: 40, foreground: 0.9, shadow: 0.7) == [30])
    }

    @Test("a talker who fills the error, the shadow level with the foreground or behind it, is no moved path")
    func talkerIsNoMovedPath() {
        var run = LostPathRun(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&run, blocks: 50, foreground: 0.01, shadow: 4).isEmpty)
        #expect(Self.takeovers(&run, blocks: 300, foreground: 0.9, shadow: 0.85).isEmpty)
        // The run goes on while the path stays lost: a window in which the shadow pulls ahead finds the move.
        #expect(Self.takeovers(&run, blocks: 60, foreground: 0.9, shadow: 0.5) == [30])
    }

    @Test("a filter that was not cancelling well before it lost the path starts no run")
    func noRunWithoutCancellingWell() {
        var run = LostPathRun(rate: BlockRate(blocksPerSecond: 100))
        #expect(Self.takeovers(&run, blocks: 300, foreground: 0.9, shadow: 0.5).isEmpty)
        // Cancelling only 6 dB (a clipping loudspeaker, drift) is not cancelling well.
        #expect(Self.takeovers(&run, blocks: 50, foreground: 0.25, shadow: 0.5).isEmpty)
        #expect(Self.takeovers(&run, blocks: 300, foreground: 0.9, shadow: 0.5).isEmpty)
        // Nor does a run outlive a block in which the foreground has the path again.
        #expect(Self.takeovers(&run, blocks: 5, foreground: 0.01, shadow: 4).isEmpty)
        #expect(Self.takeovers(&run, blocks: 20, foreground: 0.2, shadow: 4).isEmpty)
        #expect(Self.takeovers(&run, blocks: 300, foreground: 0.9, shadow: 0.5).isEmpty)
    }
}
