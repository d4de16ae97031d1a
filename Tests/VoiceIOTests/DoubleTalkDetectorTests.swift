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
}
