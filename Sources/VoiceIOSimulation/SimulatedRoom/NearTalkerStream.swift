import VoiceIO

/// The simulated room's near-end talker, one period at a time at the room's rate: the recording repeated as
/// `NearTalkerRepetition` says, counted in frames at the recording's own rate and converted to the room's rate as
/// it plays (a copy when the rates match, bit for bit the recording). A recording at a voice rate is thus held at
/// that rate: a third of its size at 48 kHz. The converter's delay is dropped once at the start, so the talker
/// starts at `nearTalkerStartSeconds` whatever the rates.
///
/// `render` is real-time safe (no allocation, no lock); `init` is not. One thread.
final class NearTalkerStream {
    private let recording: [Float]
    private let repetition: NearTalkerRepetition?
    private let converter: RateConverter
    /// One chunk of the recording's stream at its own rate, and the same converted to the room's rate.
    private let chunk: UnsafeMutableBufferPointer<Float>
    private let converted: UnsafeMutableBufferPointer<Float>
    /// Room-rate frames converted and not yet played (written and read on the room's thread).
    private let pending: SPSCRing<Float>
    /// The next frame of the recording's stream to convert, counted from the talker's start (negative before).
    private var talkerFrame: Int
    private var latencyFramesToDrop: Int

    init(configuration: SimulatedRoomConfiguration) throws(SpeexError) {
        let rate = configuration.nearTalkerSampleRate ?? configuration.sampleRate
        recording = configuration.nearTalker
        repetition = configuration.nearTalkerRepetition
        let chunkFrames = configuration.periodFrames * rate / configuration.sampleRate + 1
        converter = try RateConverter(inputRate: rate, outputRate: configuration.sampleRate,
                                      maximumInputFrames: chunkFrames)
        chunk = .allocate(capacity: chunkFrames)
        converted = .allocate(capacity: converter.maximumOutputFrames)
        for buffer in [chunk, converted] { buffer.initialize(repeating: 0) }
        latencyFramesToDrop = converter.latencyFrames
        pending = SPSCRing(minimumCapacity: configuration.periodFrames + converter.maximumOutputFrames + latencyFramesToDrop,
                           filledWith: 0)
        talkerFrame = -Int(configuration.nearTalkerStartSeconds * Double(rate))
    }

    deinit {
        for buffer in [chunk, converted] { buffer.deallocate() }
    }

    /// Writes the talker's next `output.count` frames at the room's rate (at most one period). Real-time safe.
    func render(into output: UnsafeMutableBufferPointer<Float>) {
        guard !recording.isEmpty else {
            output.update(repeating: 0)
            return
        }
        while pending.availableToRead < output.count {
            for index in chunk.indices {
                let frame = talkerFrame + index
                let recordingFrame = repetition.map { $0.recordingFrame(at: frame, recordingFrameCount: recording.count) }
                    ?? (frame >= 0 && frame < recording.count ? frame : nil)
                chunk[index] = recordingFrame.map { recording[$0] } ?? 0
            }
            talkerFrame += chunk.count
            let produced = converter.convert(UnsafeBufferPointer(chunk), into: converted)
            pending.write(UnsafeBufferPointer(rebasing: converted[..<produced]))
            if latencyFramesToDrop > 0 { latencyFramesToDrop -= pending.discard(latencyFramesToDrop) }
        }
        pending.read(into: output)
    }
}
