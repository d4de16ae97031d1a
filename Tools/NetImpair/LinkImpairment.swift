import VoiceIO
import VoiceIOSimulation

/// What one direction of the relay does to each datagram: random loss plus Gilbert-Elliott bursts (a two-state
/// chain; every datagram in the bad state is lost), a uniform extra delay (jitter), some datagrams held back
/// longer (reordering) and some sent twice (duplication). An outage loses everything inside its window.
struct LinkImpairment {
    struct Settings {
        var randomLossPercent = 0.0
        /// Chance per datagram of entering the bad (burst) state, in percent.
        var burstStartPercent = 0.0
        /// Chance per datagram of leaving the bad state, in percent (the mean burst is 100 / this datagrams).
        var burstEndPercent = 25.0
        var jitterMilliseconds = 0.0
        var reorderPercent = 0.0
        var reorderMilliseconds = 50.0
        var duplicatePercent = 0.0

        /// The long-run share lost, in percent: bad-state share plus random loss in the good state.
        var expectedLossPercent: Double {
            let badShare = burstStartPercent > 0 ? burstStartPercent / (burstStartPercent + burstEndPercent) : 0
            return 100 * (badShare + (1 - badShare) * randomLossPercent / 100)
        }
    }

    /// The fate of one datagram: lost, or sent after these delays (two when duplicated).
    enum Fate {
        case lost(inOutage: Bool, inBurst: Bool)
        case forward(delaysMilliseconds: [Double], reordered: Bool)
    }

    let settings: Settings
    private var generator: SplitMix64
    private var inBurst = false

    init(settings: Settings, seed: UInt64) {
        self.settings = settings
        generator = SplitMix64(seed: seed)
    }

    mutating func decide(inOutage: Bool) -> Fate {
        inBurst = inBurst ? !generator.chance(settings.burstEndPercent) : generator.chance(settings.burstStartPercent)
        if inOutage { return .lost(inOutage: true, inBurst: false) }
        if inBurst { return .lost(inOutage: false, inBurst: true) }
        if generator.chance(settings.randomLossPercent) { return .lost(inOutage: false, inBurst: false) }
        var delay = Double.random(in: 0...max(settings.jitterMilliseconds, 0), using: &generator)
        let reordered = generator.chance(settings.reorderPercent)
        if reordered { delay += settings.reorderMilliseconds }
        let delays = generator.chance(settings.duplicatePercent) ? [delay, delay + 1] : [delay]
        return .forward(delaysMilliseconds: delays, reordered: reordered)
    }
}
