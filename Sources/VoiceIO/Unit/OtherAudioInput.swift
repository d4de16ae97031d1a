import Synchronization

/// Queues "other audio" (app sounds, any rate) for the loudspeaker mix, converting it to the device rate on the
/// caller's thread so the real-time thread only copies.
///
/// `enqueue` is not real-time safe (it may build a converter when the rate changes) and serialises callers with
/// a lock that the real-time thread never takes: the real-time thread only reads `ring`.
final class OtherAudioInput: Sendable {
    let deviceRate: Int
    /// Device-rate frames waiting to be mixed; the real-time thread consumes.
    let ring: SPSCRing<Float>
    private let producer: Mutex<Producer>

    private struct Producer: ~Copyable {
        var converter: RateConverter?
        var converted: [Float] = []
    }

    init(deviceRate: Int, capacityFrames: Int) {
        self.deviceRate = deviceRate
        // The producer (`enqueue`) is not real-time: capacity no sound has used yet stays out of memory.
        ring = SPSCRing(untouchedMinimumCapacity: capacityFrames)
        producer = Mutex(Producer())
    }

    /// Device-rate frames that still fit.
    var freeFrameCount: Int { ring.availableToWrite }

    /// Converts `frames` (at `sampleRate`) and queues as much as fits; returns how many input frames were taken.
    /// A stream is continuous while its rate stays the same. Not real-time safe.
    func enqueue(_ frames: UnsafeBufferPointer<Float>, sampleRate: Int) throws(SpeexError) -> Int {
        try producer.withLock { (state: inout Producer) throws(SpeexError) -> Int in
            if state.converter?.inputRate != sampleRate {
                state.converter = try RateConverter(inputRate: sampleRate, outputRate: deviceRate,
                                                    maximumInputFrames: 4096)
            }
            guard let converter = state.converter else { return 0 }
            // Take only what will fit after conversion.
            let fitting = ring.availableToWrite * sampleRate / deviceRate - 2
            let taken = max(min(frames.count, fitting), 0)
            var offset = 0
            if state.converted.count < converter.maximumOutputFrames {
                state.converted = [Float](repeating: 0, count: converter.maximumOutputFrames)
            }
            while offset < taken {
                let chunk = min(4096, taken - offset)
                let produced = state.converted.withUnsafeMutableBufferPointer { output in
                    converter.convert(UnsafeBufferPointer(rebasing: frames[offset..<(offset + chunk)]), into: output)
                }
                _ = state.converted.withUnsafeBufferPointer { ring.write(UnsafeBufferPointer(rebasing: $0[..<produced])) }
                offset += chunk
            }
            return taken
        }
    }
}
