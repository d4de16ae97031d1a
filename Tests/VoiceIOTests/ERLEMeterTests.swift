import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct ERLEMeterTests {
    static func truth(echo: Float, near: Float) -> RoomPeriodComponents {
        var components = RoomPeriodComponents()
        components.echoMeanSquare = echo
        components.nearTalkerMeanSquare = near
        components.microphoneMeanSquare = echo + near
        return components
    }

    static func add(_ meter: ERLEMeter, _ truth: RoomPeriodComponents, processed: Float, bypassed: Bool = false) {
        meter.add(microphoneMeanSquare: truth.microphoneMeanSquare, processedMeanSquare: processed, gate: truth.erleGate,
                  bypassed: bypassed)
    }

    /// Only windows with echo and a silent near talker count, after `settleWindowCount` of them in a row; the
    /// bypassed windows go to their own span; every skipped window is counted by its reason.
    @Test func countsEchoOnlyWindowsAfterTheyHaveSettled() {
        let meter = ERLEMeter(windowSeconds: 0.01, settleWindowCount: 3)
        let echoOnly = Self.truth(echo: 1e-2, near: 0)
        let doubleTalk = Self.truth(echo: 1e-2, near: 1e-2)
        let silence = Self.truth(echo: 0, near: 0)
        // Double talk keeps a lot: it must not count.
        for _ in 0..<10 { Self.add(meter, doubleTalk, processed: 1e-2) }
        for _ in 0..<10 { Self.add(meter, silence, processed: 1e-6) }
        #expect(meter.report.processing.windowCount == 0)
        // The first two echo-only windows may still carry the talker through the processing latency.
        for _ in 0..<2 { Self.add(meter, echoOnly, processed: 1) }
        for _ in 0..<8 { Self.add(meter, echoOnly, processed: 1e-4) }
        meter.add(microphoneMeanSquare: 1e-2, processedMeanSquare: 0, gate: .noOutput, bypassed: false)
        let processing = meter.report.processing
        #expect(processing.windowCount == 8)
        #expect(abs(processing.seconds - 0.08) < 1e-9)
        #expect(abs((processing.decibels ?? 0) - 20) < 0.01)
        for _ in 0..<5 { Self.add(meter, echoOnly, processed: 1e-2, bypassed: true) }
        let report = meter.report
        // The run restarted after the no-output window: 2 settle, 3 count.
        #expect(report.bypass.windowCount == 3)
        #expect(abs(report.bypass.decibels ?? 99) < 0.01)
        #expect(report.processing == processing)
        #expect(report.skipped == ERLESkipCounts(quietReference: 10, doubleTalk: 0, nearTalker: 10, noOutput: 1, settling: 4))
    }

    /// A span read later, less one read earlier, is the ERLE of the stretch between them.
    @Test func spansDifferenceIntoStretches() {
        let meter = ERLEMeter(windowSeconds: 0.01)
        for _ in 0..<10 { meter.add(microphoneMeanSquare: 1, processedMeanSquare: 1e-1, gate: .echo, bypassed: false) }
        let earlier = meter.report.processing
        for _ in 0..<10 { meter.add(microphoneMeanSquare: 1, processedMeanSquare: 1e-3, gate: .echo, bypassed: false) }
        let stretch = meter.report.processing.since(earlier)
        #expect(stretch.windowCount == 10)
        #expect(abs((stretch.decibels ?? 0) - 30) < 0.01)
        #expect(abs((meter.report.processing.decibels ?? 0) - 10 * log10(20 / 1.01)) < 0.01)
        #expect(Double(meter.liveDecibels) > 10 * log10(20 / 1.01) + 1)  // the live estimate follows the recent windows
    }

    /// The report survives JSON both ways.
    @Test func reportRoundTripsThroughJSON() throws {
        let meter = ERLEMeter(windowSeconds: 0.01, settleWindowCount: 2)
        for _ in 0..<5 { meter.add(microphoneMeanSquare: 1, processedMeanSquare: 1e-2, gate: .echo, bypassed: false) }
        meter.add(microphoneMeanSquare: 1, processedMeanSquare: 1, gate: .doubleTalk, bypassed: false)
        let text = try ReportJSON.encode(meter.report)
        #expect(try ReportJSON.decode(ERLEReport.self, from: text) == meter.report)
        #expect(text.contains("\"doubleTalk\" : 1"))
    }

    /// The room reports its near talker and its echo apart: nothing played, the echo is silent.
    @Test func roomReportsItsGroundTruthPerPeriod() throws {
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
        #expect(reported[0].erleGate == .quietReference)
        #expect(abs(reported[0].microphoneMeanSquare - 0.01) < 1e-5)
        // Once the loudspeaker's signal came back through the 60 ms path, the echo is there too.
        #expect(reported[19].echoMeanSquare > 1e-3)
        #expect(abs(reported[19].nearTalkerMeanSquare - 0.01) < 1e-5)
        #expect(reported[19].erleGate == .nearTalker)
    }
}
