import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

@Suite struct EchoReductionMeterTests {
    static func components(echo: Float, near: Float) -> RoomPeriodComponents {
        var components = RoomPeriodComponents()
        components.echoMeanSquare = echo
        components.nearTalkerMeanSquare = near
        components.microphoneMeanSquare = echo + near
        return components
    }

    /// Only periods with echo and a silent near talker count, after `settlePeriodCount` of them in a row; the
    /// bypassed periods go to their own span.
    @Test func countsEchoOnlyPeriodsAfterTheyHaveSettled() {
        let meter = EchoReductionMeter(settlePeriodCount: 3)
        let echoOnly = Self.components(echo: 1e-2, near: 0)
        let doubleTalk = Self.components(echo: 1e-2, near: 1e-2)
        let silence = Self.components(echo: 0, near: 0)
        // Double talk keeps a lot: it must not count.
        for _ in 0..<10 { meter.add(doubleTalk, processedMeanSquare: 1e-2, bypassed: false) }
        for _ in 0..<10 { meter.add(silence, processedMeanSquare: 1e-6, bypassed: false) }
        #expect(meter.span(bypassed: false).periodCount == 0)
        // The first two echo-only periods may still carry the talker through the processing latency.
        for _ in 0..<2 { meter.add(echoOnly, processedMeanSquare: 1, bypassed: false) }
        for _ in 0..<8 { meter.add(echoOnly, processedMeanSquare: 1e-4, bypassed: false) }
        meter.add(echoOnly, processedMeanSquare: nil, bypassed: false)
        let processing = meter.span(bypassed: false)
        #expect(processing.periodCount == 8)
        #expect(abs((processing.decibels ?? 0) - 20) < 0.01)
        for _ in 0..<5 { meter.add(echoOnly, processedMeanSquare: 1e-2, bypassed: true) }
        let bypass = meter.span(bypassed: true)
        #expect(bypass.periodCount == 5)
        #expect(abs(bypass.decibels ?? 99) < 0.01)
        #expect(meter.span(bypassed: false) == processing)
    }

    /// The room reports its near talker and its echo apart: nothing played, the echo is silent.
    @Test func roomReportsItsComponentsPerPeriod() throws {
        var configuration = SimulatedRoomConfiguration()
        configuration.nearTalker = [Float](repeating: 0.1, count: 48000)
        configuration.noiseDBFS = nil
        let room = try SimulatedRoom(configuration: configuration)
        var reported: [RoomPeriodComponents] = []
        try room.start { _, playback in
            reported.append(room.periodComponents)
            playback.update(repeating: 0.5)
        }
        try room.run(periods: 20)
        room.stop()
        #expect(abs(reported[0].nearTalkerMeanSquare - 0.01) < 1e-5)
        #expect(reported[0].echoMeanSquare == 0)
        #expect(abs(reported[0].microphoneMeanSquare - 0.01) < 1e-5)
        // Once the loudspeaker's signal came back through the 60 ms path, the echo is there too.
        #expect(reported[19].echoMeanSquare > 1e-3)
        #expect(abs(reported[19].nearTalkerMeanSquare - 0.01) < 1e-5)
    }
}
