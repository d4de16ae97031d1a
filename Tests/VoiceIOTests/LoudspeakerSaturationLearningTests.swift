import Testing
@testable import VoiceIO

/// `LoudspeakerSaturation`'s learning rule, block by block.
@Suite("Learning a loudspeaker's saturation")
struct LoudspeakerSaturationLearningTests {
    /// One block whose error the derivative's response explains entirely (correlation 1).
    static func significantBlock(_ saturation: inout LoudspeakerSaturation) {
        saturation.learn(errorCorrelation: 1, derivativeEnergy: 1, errorEnergy: 1)
    }

    @Test("the first step waits for a quarter of a second of significant blocks in a row")
    func firstStepWaitsForARun() {
        var saturation = LoudspeakerSaturation()
        for _ in 1..<LoudspeakerSaturation.startBlockCount { Self.significantBlock(&saturation) }
        #expect(saturation.kneeCoefficient == 0, "learning started before the run was long enough")
        Self.significantBlock(&saturation)
        #expect(saturation.kneeCoefficient > 0, "a long enough run did not start learning")
    }

    @Test("a break in the run starts the count again")
    func aBreakStartsTheCountAgain() {
        var saturation = LoudspeakerSaturation()
        for _ in 1..<LoudspeakerSaturation.startBlockCount { Self.significantBlock(&saturation) }
        // An uncorrelated block with a loud error: the smoothed correlation falls under the test.
        saturation.learn(errorCorrelation: -30, derivativeEnergy: 1, errorEnergy: 1000)
        for _ in 1..<LoudspeakerSaturation.startBlockCount { Self.significantBlock(&saturation) }
        #expect(saturation.kneeCoefficient == 0, "a broken run started learning")
    }
}
