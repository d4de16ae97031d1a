import Foundation
import Testing
import VoiceCall

@Suite struct EModelTests {
    /// G.107 (06/2015) §7.7: every parameter at its default gives R = 93.2; G.107 Annex B maps it to MOS 4.41.
    @Test func defaultsGiveTheRecommendedRating() {
        let model = EModel(oneWayDelayMilliseconds: 0, codec: .g711)
        #expect(abs(model.rFactor - 93.2) < 0.1, "R = \(model.rFactor)")
        #expect(abs(model.meanOpinionScore - 4.41) < 0.01, "MOS = \(model.meanOpinionScore)")
        #expect(EModel.meanOpinionScore(rFactor: -5) == 1)
        #expect(EModel.meanOpinionScore(rFactor: 120) == 4.5)
        #expect(abs(EModel.meanOpinionScore(rFactor: 50) - 2.575) < 0.001)  // 1 + 1.75 + 50·(-10)·50·7e-6
    }

    /// Loss: Ie,eff = Ie + (95 − Ie)·Ppl / (Ppl/BurstR + Bpl), with G.113 Appendix I's G.711 values.
    @Test(arguments: [(1.0, 25.1, 89.56), (2.0, 25.1, 86.19), (5.0, 25.1, 77.42), (10.0, 25.1, 66.14),
                      (1.0, 4.3, 75.28), (5.0, 4.3, 42.13)])
    func randomLossFollowsTheEffectiveEquipmentImpairment(loss: Double, bpl: Double, expected: Double) {
        let codec = EModel.Codec(equipmentImpairment: 0, packetLossRobustness: bpl)
        let r = EModel(oneWayDelayMilliseconds: 0, packetLossPercent: loss, codec: codec).rFactor
        #expect(abs(r - expected) < 0.1, "\(loss) % loss, Bpl \(bpl): R = \(r)")
    }

    /// Bursty loss hurts more than the same loss at random (BurstR > 1).
    @Test func burstyLossHurtsMore() {
        let random = EModel(oneWayDelayMilliseconds: 50, packetLossPercent: 3).rFactor
        let bursty = EModel(oneWayDelayMilliseconds: 50, packetLossPercent: 3, burstRatio: 2).rFactor
        #expect(bursty < random - 0.5)  // Ie,eff 10.7 against 10.1
    }

    /// Delay, against the widely used fit of the default G.107 delay impairment (Cole and Rosenbluth, 2001:
    /// Id ≈ 0.024·d + 0.11·(d − 177.3)·H(d − 177.3)), which the full model must follow (R 93.2, 90.7, 89.5, 85.8,
    /// 79.2, 72.7 at 0, 100, 150, 200, 250, 300 ms); and the full model's own falling curve.
    @Test(arguments: [25.0, 50, 100, 150, 200, 250, 300, 400])
    func delayFollowsTheKnownCurve(milliseconds: Double) {
        let r = EModel(oneWayDelayMilliseconds: milliseconds, codec: .g711).rFactor
        let fit = 93.2 - 0.024 * milliseconds - 0.11 * max(milliseconds - 177.3, 0)
        // The fit is linear in two pieces; the model curves: close up to 300 ms, 3 points apart at 400 ms.
        #expect(abs(r - fit) < (milliseconds <= 300 ? 0.5 : 3.5), "\(milliseconds) ms: R = \(r), fit \(fit)")
        let later = EModel(oneWayDelayMilliseconds: milliseconds + 50, codec: .g711).rFactor
        #expect(later < r)
    }
}
