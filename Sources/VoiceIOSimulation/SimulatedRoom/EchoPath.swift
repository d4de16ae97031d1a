import Glibc
import VoiceIO

/// Loudspeaker to microphone: soft clipping → clock drift (fractional resampling) → bulk delay → room response.
/// `process` is real-time safe; one thread.
final class EchoPath {
    let sampleRate: Int
    /// The delay actually simulated before the direct path, in frames (the requested one, or the internal
    /// minimum when that is larger).
    let bulkDelayFrames: Int
    private let drive: Float?
    private let driftConverter: RateConverter?
    private let convolver: PartitionedConvolver
    private let delayQueue: SPSCRing<Float>
    private let shaped: UnsafeMutableBufferPointer<Float>
    private let drifted: UnsafeMutableBufferPointer<Float>
    private let delayed: UnsafeMutableBufferPointer<Float>

    /// Not real-time safe.
    init(configuration: SimulatedRoomConfiguration, impulseResponse: [Float]) throws(SpeexError) {
        sampleRate = configuration.sampleRate
        let period = configuration.periodFrames
        drive = configuration.loudspeakerDrive
        var driftConverter: RateConverter?
        if configuration.driftPPM != 0 {
            // Rates scaled by ten give the ratio a resolution of 2 ppm at 48 kHz.
            let base = sampleRate * 10
            let drifted = base + Int((Double(base) * configuration.driftPPM / 1_000_000).rounded())
            driftConverter = try RateConverter(inputRate: base, outputRate: drifted, maximumInputFrames: period)
        }
        self.driftConverter = driftConverter
        let convolver = PartitionedConvolver(impulseResponse: impulseResponse, partitionFrames: 256)
        self.convolver = convolver
        let internalFrames = convolver.partitionFrames + (driftConverter?.latencyFrames ?? 0)
        let requested = Int(configuration.bulkDelayMilliseconds * Double(sampleRate) / 1000)
        bulkDelayFrames = max(requested, internalFrames)
        // Holds the bulk delay and a period in flight; with drift, a second of slack for the delay it adds (1 s
        // lasts 10 000 s at 100 ppm). The ring wraps over all its capacity: more slack is resident for nothing.
        let slackFrames = driftConverter == nil ? 2 * period : sampleRate
        let delayQueue = SPSCRing<Float>(minimumCapacity: bulkDelayFrames + slackFrames, filledWith: 0)
        let prefill = [Float](repeating: 0, count: bulkDelayFrames - internalFrames)
        prefill.withUnsafeBufferPointer { _ = delayQueue.write($0) }
        self.delayQueue = delayQueue
        shaped = .allocate(capacity: period)
        self.drifted = .allocate(capacity: driftConverter?.maximumOutputFrames ?? period)
        delayed = .allocate(capacity: period)
        for buffer in [shaped, drifted, delayed] { buffer.initialize(repeating: 0) }
    }

    deinit {
        for buffer in [shaped, drifted, delayed] { buffer.deallocate() }
    }

    /// Turns one period of loudspeaker signal into the echo arriving at the microphone (same count, at most one
    /// period). Real-time safe.
    func process(speaker: UnsafeBufferPointer<Float>, into echo: UnsafeMutableBufferPointer<Float>) {
        let count = min(speaker.count, shaped.count, echo.count)
        for index in 0..<count {
            if let drive {
                shaped[index] = tanhf(drive * speaker[index]) / drive
            } else {
                shaped[index] = speaker[index]
            }
        }
        let input = UnsafeBufferPointer(rebasing: shaped[..<count])
        if let driftConverter {
            let produced = driftConverter.convert(input, into: drifted)
            delayQueue.write(UnsafeBufferPointer(rebasing: drifted[..<produced]))
        } else {
            delayQueue.write(input)
        }
        let output = UnsafeMutableBufferPointer(rebasing: delayed[..<count])
        let read = delayQueue.read(into: output)
        if read < count { output.baseAddress!.advanced(by: read).update(repeating: 0, count: count - read) }
        convolver.process(UnsafeBufferPointer(output), into: UnsafeMutableBufferPointer(rebasing: echo[..<count]))
    }
}
