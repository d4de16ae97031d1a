import Testing
@testable import VoiceIO

@Suite struct DoubleTalkDetectorTests {
    @Test func detectsTheNearEndAndHoldsThroughShortPauses() {
        var detector = DoubleTalkDetector(ratioThreshold: 4, hangoverFrames: 3)
        var decisions: [Bool] = []
        // Echo only (output explained by residual echo), a near-talker frame (10 times that), then 4 echo frames.
        for output: Float in [1, 9, 1, 1, 1, 1] {
            decisions.append(detector.update(outputPower: output, residualEchoPower: 0.8, noisePower: 0.1,
                                             farEndActive: true))
        }
        #expect(decisions == [false, true, true, true, true, false])
    }

    @Test func nearEndAloneIsNotDoubleTalk() {
        var detector = DoubleTalkDetector()
        detector.update(outputPower: 5, residualEchoPower: 0, noisePower: 0.1, farEndActive: false)
        #expect(detector.nearEndActive && !detector.doubleTalk)
        detector.update(outputPower: 5, residualEchoPower: 0, noisePower: 0.1, farEndActive: true)
        #expect(detector.doubleTalk)
    }

    /// A frame dismissed as echo ends the hangover. After a one-frame onset the count goes on from the talker heard
    /// before it (that frame was the echo's onset); after a talker heard for two frames it does not.
    @Test func aDismissedFrameEndsTheHangoverAndRetractsAOneFrameOnset() {
        func detector(quietFrames: Int, talkerFrames: Int) -> DoubleTalkDetector {
            var detector = DoubleTalkDetector(ratioThreshold: 4, hangoverFrames: 8)
            // A talker, quiet frames, a new onset.
            let outputs = [9] + [Float](repeating: 1, count: quietFrames) + [Float](repeating: 9, count: talkerFrames)
            for output in outputs {
                detector.update(outputPower: output, residualEchoPower: 0.8, noisePower: 0.1, farEndActive: true)
            }
            // The next frame is echo the estimate predicts.
            detector.update(outputPower: 0, residualEchoPower: 0.8, noisePower: 0.1, farEndActive: true)
            return detector
        }
        var onset = detector(quietFrames: 100, talkerFrames: 1)
        #expect(onset.nearEndActive, "the hangover holds unless the frame is dismissed")
        onset.dismissFrame()
        #expect(!onset.nearEndActive && !onset.doubleTalk)
        #expect(onset.framesSinceNearEnd == 102, "counts on from the talker before the onset")
        var talker = detector(quietFrames: 100, talkerFrames: 2)
        talker.dismissFrame()
        #expect(!talker.nearEndActive)
        #expect(talker.framesSinceNearEnd == 9, "a talker heard twice stays heard: only the hangover ends")
    }
}
