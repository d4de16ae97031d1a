import Glibc
import Testing
@testable import VoiceIO
import VoiceIOSimulation

/// The voice unit in real time over the PulseAudio loopback (same suite and daemon as `ALSAPulseLoopbackTests`):
/// what the unit plays into the null sink comes back from its monitor about 30 ms later, so the echo path is the
/// loopback itself. Far-end speech is the render callback's voice; the raw capture and the processed voice are
/// kept and compared once the canceller has converged.
extension ALSAPulseLoopbackTests {
    static let voiceRate = 16000
    /// The most microphone audio the 160 ms stall of `theUnitKeepsCancellingAcrossAnXrun` may lose, in milliseconds.
    static let mostLostMilliseconds = 400.0

    /// One run of the unit over the loopback: the raw microphone (device rate), the processed voice (voice rate),
    /// the unit's statistics and what the stall instrument saw.
    struct EchoRun {
        var microphone: [Float]
        /// What the unit played (device rate), frame for frame beside `microphone`.
        var loudspeaker: [Float]
        var processed: [Float]
        var statistics: VoiceProcessingStatistics
        var beforeStall: VoiceProcessingStatistics?
        var stall: StallingTapDevice.Gap?
        /// How far the loopback's delivery fell behind the wall clock, at worst, over the watched span (from
        /// `watchFromSeconds`): the audio a starved daemon dropped or held back, in milliseconds.
        var lateMilliseconds: Double
        /// The same, watched from shortly after the stall (0 without one): lateness the stall did not cause.
        var lateAfterStallMilliseconds: Double
        /// The device's buffer, in milliseconds.
        var bufferMilliseconds: Double

        /// Why this run's signal was cut by the machine rather than the unit (nil: it ran clean): xruns, or the
        /// loopback falling behind by more than the device's buffer in the watched span.
        var disturbance: String? {
            if statistics.deviceXrunCount > 0 { return "the device reported \(statistics.deviceXrunCount) xrun(s)" }
            if lateMilliseconds > bufferMilliseconds {
                return "the loopback delivered up to \(Int(lateMilliseconds)) ms late (buffer \(Int(bufferMilliseconds)) ms)"
            }
            return nil
        }

        /// Why a run with a planned stall was cut by the machine beyond that stall (nil: only the stall): xruns
        /// before it, the loopback falling behind by more than the buffer once the device had recovered, or the stall
        /// losing `mostLostMilliseconds` of microphone audio or more (2.5 times the 160 ms stall: a clean stall loses
        /// 157-183 ms; one CI run lost more, the machine holding the daemon past the stall).
        var disturbanceBesideTheStall: String? {
            if let before = beforeStall, before.deviceXrunCount > 0 {
                return "the device reported \(before.deviceXrunCount) xrun(s) before the stall"
            }
            if let gap = stall, gap.lostMilliseconds >= ALSAPulseLoopbackTests.mostLostMilliseconds {
                return "the stall lost \(Int(gap.lostMilliseconds)) ms of microphone audio (stalled"
                    + " \(Int(gap.stallMilliseconds)) ms)"
            }
            if lateAfterStallMilliseconds > bufferMilliseconds {
                return "the loopback delivered up to \(Int(lateAfterStallMilliseconds)) ms late after the stall"
                    + " (buffer \(Int(bufferMilliseconds)) ms)"
            }
            return nil
        }

        /// The loopback's echo delay between `fromSeconds` and `toSeconds` of delivered audio, in milliseconds: the
        /// lag (0-200 ms) at which the microphone best matches what the unit played (a digital loopback returns it
        /// exactly), searched on every fourth frame. What the delay estimate should find, whatever the server did.
        func loopbackDelayMilliseconds(fromSeconds: Double, toSeconds: Double) -> Double {
            let rate = Double(ALSAPulseLoopbackTests.sampleRate)
            let frames = Int(fromSeconds * rate)..<min(Int(toSeconds * rate), microphone.count)
            let lag = EchoRunSupport.bestLag(of: loudspeaker, in: microphone, frames: frames, maximumLag: Int(0.2 * rate),
                                             step: 4)
            return Double(lag) * 1000 / rate
        }

        /// Processed over raw microphone power between `fromSeconds` and `toSeconds` of delivered audio, in dB
        /// (positive: the processed voice is quieter).
        func reductionDB(fromSeconds: Double, toSeconds: Double) -> Double {
            let micRate = Double(ALSAPulseLoopbackTests.sampleRate)
            let voiceRate = Double(ALSAPulseLoopbackTests.voiceRate)
            return Signal.powerDB(microphone, from: Int(fromSeconds * micRate), to: Int(toSeconds * micRate))
                - Signal.powerDB(processed, from: Int(fromSeconds * voiceRate), to: Int(toSeconds * voiceRate))
        }
    }

    /// Runs the unit (AGC off, bypass as given) on the loopback for `seconds` of captured audio, stalling the I/O
    /// thread once for `stallMilliseconds` at `stallAtSeconds` when given, a near talker (device rate) added to
    /// the capture from `nearTalkerFromSeconds` when given; capturing the headset's sink instead of the loopback's
    /// monitor when `headset`.
    static func runEcho(seconds: Double, bypass: Bool, stallAtSeconds: Double? = nil,
                        stallMilliseconds: Double = 0, watchFromSeconds: Double = 1,
                        nearTalker: [Float] = [], nearTalkerFromSeconds: Double = 0, headset: Bool = false) throws -> EchoRun {
        let periodsPerSecond = 100
        let stallCycle = stallAtSeconds.map { Int($0 * Double(periodsPerSecond)) }
        let device = StallingTapDevice(try loopbackDevice(headset: headset), capacityFrames: Int(seconds * Double(sampleRate)),
                                       stallAtCycle: stallCycle, stallMicroseconds: UInt32(stallMilliseconds * 1000),
                                       watchFromCycle: Int(watchFromSeconds * Double(periodsPerSecond)),
                                       nearTalker: nearTalker,
                                       nearTalkerFromFrame: Int(nearTalkerFromSeconds * Double(sampleRate)))
        var beforeStall: VoiceProcessingStatistics?
        let (unit, processed) = try EchoRunSupport.run(on: device, voiceRate: voiceRate, seconds: seconds,
                                                       bypass: bypass) { unit in
            #expect(unit.deviceConfiguration.periodFrames * periodsPerSecond == unit.deviceConfiguration.sampleRate)
            guard let stallCycle else { return }
            _ = ALSATestSupport.wait(upToSeconds: seconds + 10) { device.cycleCount >= stallCycle - 1 }
            beforeStall = unit.statistics
        }
        let configuration = unit.deviceConfiguration
        return EchoRun(microphone: device.microphone.frames, loudspeaker: device.loudspeaker.frames, processed: processed,
                       statistics: unit.statistics,
                       beforeStall: beforeStall, stall: device.gap, lateMilliseconds: device.lateMilliseconds,
                       lateAfterStallMilliseconds: device.lateAfterStallMilliseconds,
                       bufferMilliseconds: Double(configuration.bufferFrames) * 1000 / Double(configuration.sampleRate))
    }

    static func describe(_ stats: VoiceProcessingStatistics) -> String {
        "ERLE \(stats.erleDB) dB, measured delay \(stats.measuredDelayMilliseconds) ms"
            + " (applied \(stats.delayMilliseconds) ms, estimated \(stats.isDelayEstimated)), xruns \(stats.deviceXrunCount)"
    }

    /// Makes runs until one is undisturbed (`EchoRun.disturbance`), 3 at most, printing why each repeated one was;
    /// returns the last and how many were made.
    static func undisturbedRun(_ label: String, _ makeRun: () throws -> EchoRun) throws -> (run: EchoRun, attempts: Int) {
        var run = try makeRun()
        var attempts = 1
        while let disturbance = run.disturbance, attempts < 3 {
            print("\(label): attempt \(attempts) repeated: \(disturbance)")
            run = try makeRun()
            attempts += 1
        }
        return (run, attempts)
    }

    /// A run the machine disturbed (xruns, or a starved daemon delivering late while the canceller converges or
    /// is measured) cut or shifted the echo path under the canceller; such runs are repeated (3 at most) and
    /// the reason is printed.
    @Test func theUnitRemovesTheLoopbacksEcho() throws {
        let (run, attempts) = try Self.undisturbedRun("pulse echo") { try Self.runEcho(seconds: 5, bypass: false) }
        let reduction = run.reductionDB(fromSeconds: 3, toSeconds: 5)
        print("pulse echo: reduction \(reduction) dB over the last 2 s of 5 s (mic \(Signal.powerDB(run.microphone)) dB); \(Self.describe(run.statistics)); late at most \(run.lateMilliseconds) ms; attempt \(attempts)\(run.disturbance.map { ", still disturbed: \($0)" } ?? "")")
        #expect(Signal.powerDB(run.microphone, from: 3 * Self.sampleRate) > -40, "no echo came back")
        #expect(reduction >= 20, "echo reduced by only \(reduction) dB")
        #expect(run.statistics.isDelayEstimated)
        // The loopback's delay is the server's: about 30 ms, but one clean-clone CI run's server returned the audio
        // 52 ms late. The estimate must find the delay the server gave this run.
        let loopback = run.loopbackDelayMilliseconds(fromSeconds: 1.5, toSeconds: 5)
        #expect(abs(Double(run.statistics.measuredDelayMilliseconds) - loopback) <= 2,
                "measured delay \(run.statistics.measuredDelayMilliseconds) ms, the loopback's \(loopback) ms")
    }

    @Test func bypassLeavesTheEchoAsCaptured() throws {
        let run = try Self.runEcho(seconds: 2.5, bypass: true)
        let reduction = run.reductionDB(fromSeconds: 1, toSeconds: 2.5)
        print("pulse echo, bypass: reduction \(reduction) dB; \(Self.describe(run.statistics))")
        #expect(abs(reduction) < 1.5, "bypass changed the level by \(reduction) dB")
    }

    /// A stall of four buffers on the I/O thread with the unit running: the device recovers, the unit's
    /// statistics count the xrun, the cycles go on, the delay estimate follows the loopback's (within 2 ms of the
    /// delay at which the microphone matches what was played, before the stall and after it), and the canceller is
    /// back to 15 dB within 2.75 s. (PulseAudio restarts the pair with an echo delay off the old one: 0.3-3.1 ms in
    /// 27 CI runs, 14.7 ms in one, so the adaptive filter has to reconverge: that takes 0.75–2 s here, against about
    /// 1.5 s at the first start.)
    ///
    /// A run the machine disturbed beside the planned stall (xruns before it, a starved daemon after it) is
    /// repeated (3 at most) and the reason printed, as in `theUnitRemovesTheLoopbacksEcho`: such cuts move the
    /// echo path again (seen under load and AddressSanitizer: 4.6 dB, delay 5 ms off).
    @Test func theUnitKeepsCancellingAcrossAnXrun() throws {
        let stallSeconds = 3.0
        func stalledRun() throws -> EchoRun {
            try Self.runEcho(seconds: 6, bypass: false, stallAtSeconds: stallSeconds, stallMilliseconds: 160)
        }
        var run = try stalledRun()
        var attempts = 1
        while let disturbance = run.disturbanceBesideTheStall, attempts < 3 {
            print("pulse echo xrun: attempt \(attempts) repeated: \(disturbance)")
            run = try stalledRun()
            attempts += 1
        }
        let before = try #require(run.beforeStall)
        let gap = try #require(run.stall, "the stall never happened")
        let reduction = run.reductionDB(fromSeconds: 4.5, toSeconds: 6)
        let windows = stride(from: stallSeconds, to: 5.75, by: 0.25).map { start in
            (start: start, reductionDB: run.reductionDB(fromSeconds: start, toSeconds: start + 0.25),
             microphoneDB: Signal.powerDB(run.microphone, from: Int(start * Double(Self.sampleRate)),
                                          to: Int((start + 0.25) * Double(Self.sampleRate))))
        }
        let reconverged = windows.first { $0.microphoneDB > -35 && $0.reductionDB >= 15 }
        let loopbackBefore = run.loopbackDelayMilliseconds(fromSeconds: 1.5, toSeconds: stallSeconds)
        let loopbackAfter = run.loopbackDelayMilliseconds(fromSeconds: 4.5, toSeconds: 6)
        let timeline = windows.map { String(format: "%.1f", $0.reductionDB) }.joined(separator: " ")
        print("pulse echo xrun: stalled \(gap.stallMilliseconds) ms, microphone audio lost \(gap.lostMilliseconds) ms;"
              + " before: \(Self.describe(before)); after: \(Self.describe(run.statistics));"
              + " reduction per 250 ms from the stall: \(timeline) dB; back to 15 dB after"
              + " \(reconverged.map { "\(Int(($0.start - stallSeconds) * 1000)) ms" } ?? "never");"
              + " reduction \(reduction) dB over 1.5–3 s after the stall; loopback delay \(loopbackBefore) ms before,"
              + " \(loopbackAfter) ms after; attempt \(attempts)"
              + (run.disturbanceBesideTheStall.map { ", still disturbed: \($0)" } ?? ""))
        #expect(run.statistics.deviceXrunCount > before.deviceXrunCount)
        // The instrument theUnitRemovesTheLoopbacksEcho repeats on sees this cut too, by the lateness alone.
        #expect(run.lateMilliseconds > run.bufferMilliseconds, "late at most \(run.lateMilliseconds) ms")
        #expect(run.statistics.periodCount >= 600, "cycles stopped after the stall")
        #expect(gap.lostMilliseconds > 100 && gap.lostMilliseconds < Self.mostLostMilliseconds,
                "lost \(gap.lostMilliseconds) ms")
        #expect(abs(Double(before.measuredDelayMilliseconds) - loopbackBefore) <= 2,
                "measured delay \(before.measuredDelayMilliseconds) ms before the stall, the loopback's \(loopbackBefore) ms")
        #expect(abs(Double(run.statistics.measuredDelayMilliseconds) - loopbackAfter) <= 2,
                "measured delay \(run.statistics.measuredDelayMilliseconds) ms after the stall, the loopback's \(loopbackAfter) ms")
        #expect(reconverged != nil, "the echo reduction never came back to 15 dB: \(timeline)")
        #expect(reduction >= 6, "echo reduced by only \(reduction) dB after the xrun")
    }
}
