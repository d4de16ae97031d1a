#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// Runs a unit for a number of device periods: plays the far-end voice through its render callback, feeds the app
/// sound and drains the processed voice into a file between periods (off the real-time thread), and keeps the
/// unit's levels while the far end talks. The file is written as the run goes (its header valid after every
/// write), so a run that is killed or whose device fails leaves what it processed.
///
/// On a ``SimulatedRoom`` with the virtual clock, ``run(periods:seconds:progress:)`` drives the room itself, as
/// fast as the CPU goes; on any other device (or the room's real-time clock) it waits for the device's own thread.
/// Not real-time safe: call from one control thread.
public final class SimulationSession {
    public let unit: VoiceProcessingIO
    private let appSound: [Float]
    private let appRate: Int
    private let writer: AudioFileWriter
    private var appPosition = 0
    private var drain = [Float](repeating: 0, count: 8192)
    /// Levels while the far end was audible, over the snapshots taken between periods.
    public private(set) var farTalkLevels = FarTalkLevels()
    /// Called on the control thread before each batch of periods on the virtual clock (which runs faster than
    /// real time), e.g. to let file players buffer ahead.
    public var beforeVirtualPeriods: (() -> Void)?

    /// Sets the unit's render callback to play `farVoice` (at the voice rate, then silence). `appSound` (at
    /// `appRate` Hz) goes to ``VoiceProcessingIO/enqueueOtherAudio(_:sampleRate:)``; the processed voice to
    /// `writer`.
    public init(unit: VoiceProcessingIO, farVoice: [Float], appSound: [Float], appRate: Int, writer: AudioFileWriter) {
        self.unit = unit
        self.appSound = appSound
        self.appRate = appRate
        self.writer = writer
        let source = VoiceSource(farVoice)
        unit.setRenderCallback { source.render($0) }
    }

    /// Starts the unit and runs it until the device ran `periods` periods, calling `progress` with the unit's
    /// statistics every 100 ms on a paced device (never on the virtual clock); then stops the unit, drains the
    /// last voice and closes the file. A paced device that reports a failure, or that has not run the periods
    /// after `seconds` plus five seconds of wall-clock time, ends the run with a ``SimulationError`` (what was
    /// processed until then is in the file).
    public func run(periods: Int, seconds: Double, progress: (VoiceProcessingStatistics) -> Void = { _ in }) throws {
        try unit.start()
        if let room = unit.device as? SimulatedRoom, room.configuration.clock == .virtual {
            var done = 0
            while done < periods {
                try pump()
                beforeVirtualPeriods?()
                let chunk = min(10, periods - done)
                try room.run(periods: chunk)
                done += chunk
            }
        } else {
            try runPaced(periods: periods, seconds: seconds, progress: progress)
        }
        try finish()
    }

    private func finish() throws {
        unit.stop()
        try pump()
        writer.close()
    }

    private func pump() throws {
        if appPosition < appSound.count {
            appPosition += try appSound[appPosition...].withUnsafeBufferPointer {
                try unit.enqueueOtherAudio($0, sampleRate: appRate)
            }
        }
        while true {
            let count = drain.withUnsafeMutableBufferPointer { unit.readInput(into: .float32($0)) }
            guard count > 0 else { break }
            try drain[..<count].withUnsafeBufferPointer { (frames) throws(AudioFileError) in try writer.write(frames) }
        }
        farTalkLevels.observe(unit.statistics)
    }

    private func runPaced(periods: Int, seconds: Double, progress: (VoiceProcessingStatistics) -> Void) throws {
        let deadline = ContinuousClock.now + .milliseconds(Int((seconds + 5) * 1000))
        while unit.statistics.periodCount < periods {
            if let failure = unit.device.failure {
                let periodsRun = unit.statistics.periodCount
                try finish()
                throw SimulationError.deviceFailed(
                    String(describing: failure), periodsRun: periodsRun, periods: periods, path: writer.path,
                    savedSeconds: Double(writer.framesWritten) / Double(writer.format.sampleRate))
            }
            guard ContinuousClock.now < deadline else {
                unit.stop()
                throw SimulationError.stalled(device: unit.device.name, periodsRun: unit.statistics.periodCount,
                                              periods: periods, seconds: Int(seconds + 5))
            }
            usleep(100_000)
            try pump()
            progress(unit.statistics)
        }
    }
}
