import VoiceCall

/// Plays a script of operations on a `JitterBuffer`: after two setup bytes (rate, capacity), each step is a
/// push of a packet (sequence and timestamp steps, SSRC, payload from the input), a pull of 2.5–40 ms, or a
/// clock step. Every pull must fill its whole buffer with finite samples; the delay must stay within what
/// the capacity can hold and the target within its maximum.
enum JitterBufferFuzzing {
    static let maxDelayMilliseconds = 400
    /// Operations per input at most: pulls decode, and longer scripts add little.
    static let maxOperationCount = 256

    static func run(_ input: UnsafeRawBufferPointer) {
        var script = FuzzInput(input)
        let sampleRate = OpusFormat.sampleRates[Int(script.byte()) % OpusFormat.sampleRates.count]
        let capacity = Int(script.byte()) % 63 + 2
        guard let buffer = try? JitterBuffer(sampleRate: sampleRate, capacity: capacity, maxPayloadByteCount: 400,
                                             maxDelayMilliseconds: maxDelayMilliseconds) else {
            preconditionFailure("no jitter buffer at \(sampleRate) Hz")
        }
        let pcm = UnsafeMutableBufferPointer<Float>.allocate(capacity: sampleRate * 40 / 1000)
        defer { pcm.deallocate() }
        // Most audio the buffer may hold: every slot with a 120 ms packet, plus one decoded packet staged.
        let maxHeldMilliseconds = Double((buffer.capacity + 1) * 120)
        var sequence: UInt16 = 0
        var timestamp: UInt32 = 0
        var arrivalTicks: Int64 = 0
        for _ in 0..<maxOperationCount where !script.isAtEnd {
            let operation = script.byte()
            switch operation % 4 {
            case 0, 1:
                sequence &+= UInt16(bitPattern: Int16(Int8(bitPattern: script.byte())))
                timestamp &+= UInt32(bitPattern: Int32(Int8(bitPattern: script.byte())) * 120)
                let ssrc: UInt32 = operation & 0x80 == 0 ? 0x1234_5678 : 0x9abc_def0
                let header = RTPHeader(marker: operation & 0x40 != 0, sequenceNumber: sequence, timestamp: timestamp,
                                       ssrc: ssrc)
                let payload = script.bytes(upTo: Int(script.byte()) * 2)
                buffer.push(RTPPacket(header: header, payload: payload), arrivalTicks: arrivalTicks)
            case 2:
                let frameCount = (Int(operation >> 2) % 16 + 1) * sampleRate / 400
                let block = UnsafeMutableBufferPointer(rebasing: pcm[..<frameCount])
                block.update(repeating: .nan)
                buffer.pull(into: block, nowTicks: arrivalTicks)
                precondition(block.isAllFinite, "pull left samples unwritten or not finite")
                arrivalTicks += Int64(frameCount * OpusFormat.rtpClockRate / sampleRate)
            default:
                arrivalTicks += Int64(operation >> 2) * 48 * 5
            }
            let statistics = buffer.statistics
            precondition((0...maxHeldMilliseconds).contains(statistics.delayMilliseconds), "delay out of bounds")
            precondition((0...Double(maxDelayMilliseconds)).contains(statistics.targetDelayMilliseconds),
                         "target delay out of bounds")
        }
    }
}
