import Testing
@testable import VoiceIO

@Suite struct MisadjustmentMonitorTests {
    /// Feeds `blocks` far-end blocks whose error is `coupling` × estimate + independent noise; returns the block
    /// (counted from 1) at which the monitor reported misadjustment, or nil.
    static func firstReport(coupling: Float, blocks: Int) -> Int? {
        var monitor = MisadjustmentMonitor()
        var state: UInt32 = 7
        func random() -> Float {
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max)
        }
        var estimate = [Float](repeating: 0, count: 160), error = [Float](repeating: 0, count: 160)
        for block in 1...blocks {
            for index in 0..<160 {
                estimate[index] = 0.1 * random()
                error[index] = coupling * estimate[index] + 0.03 * random()
            }
            let report = estimate.withUnsafeBufferPointer { y in
                error.withUnsafeBufferPointer { e in monitor.observe(error: e, estimate: y, farEndActive: true) }
            }
            if report { return block }
        }
        return nil
    }

    @Test func reportsAnErrorThatOpposesTheEstimateOnceSettled() throws {
        let block = try #require(Self.firstReport(coupling: -0.8, blocks: 400))
        let monitor = MisadjustmentMonitor()
        #expect(block > monitor.settlingBlocks)
        #expect(block <= monitor.settlingBlocks + (monitor.consecutiveWindows + 1) * monitor.windowBlocks)
    }

    @Test func staysQuietWhenTheErrorIsIndependentOrAligned() {
        #expect(Self.firstReport(coupling: 0, blocks: 600) == nil)
        #expect(Self.firstReport(coupling: 0.5, blocks: 600) == nil)
    }
}
