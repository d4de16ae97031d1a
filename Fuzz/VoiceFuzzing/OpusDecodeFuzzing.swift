import VoiceCall

/// Cuts the input into payloads for one `OpusDecoder` (rate from the first byte). Each payload's frames are
/// counted and its FEC flag read; then, as its flag byte says, it is decoded, the frame before it is recovered
/// from its FEC, a gap is concealed, or the decoder is reset. Whatever libopus accepts must fill the frames it
/// reports with finite samples.
enum OpusDecodeFuzzing {
    /// Payloads per input at most: decoding dominates the time, longer scripts add little.
    static let maxPayloadCount = 32

    static func run(_ input: UnsafeRawBufferPointer) {
        var script = FuzzInput(input)
        let sampleRate = OpusFormat.sampleRates[Int(script.byte()) % OpusFormat.sampleRates.count]
        guard let decoder = try? OpusDecoder(sampleRate: sampleRate) else {
            preconditionFailure("no Opus decoder at \(sampleRate) Hz")
        }
        let maxFrameCount = sampleRate * 120 / 1000
        let pcm = UnsafeMutableBufferPointer<Float>.allocate(capacity: maxFrameCount)
        defer { pcm.deallocate() }
        for _ in 0..<maxPayloadCount where !script.isAtEnd {
            let flags = script.byte()
            let payload = script.bytes(upTo: Int(script.uint16() % 1500))
            let carriesFEC = OpusDecoder.carriesFEC(payload)
            precondition(!carriesFEC || payload[0] >> 3 < 16, "a CELT-only packet said to carry FEC")
            let frameCount = try? decoder.frameCount(ofPacket: payload)
            if let frameCount { precondition((0...maxFrameCount).contains(frameCount), "packet longer than 120 ms") }
            // A buffer of the packet's own length (as the jitter buffer gives) or of 2.5 ms steps up to 120 ms.
            let steps = Int(flags >> 2) % 48 + 1
            let requested = flags & 0x40 != 0 ? frameCount ?? steps * sampleRate / 400 : steps * sampleRate / 400
            guard requested > 0 else { continue }
            let buffer = UnsafeMutableBufferPointer(rebasing: pcm[..<requested])
            buffer.update(repeating: .nan)
            let written: Int?
            switch flags & 3 {
            case 0: written = try? decoder.decode(payload, into: buffer)
            case 1: written = try? decoder.recover(fromNext: payload, into: buffer)
            case 2: written = try? decoder.conceal(into: buffer)
            default:
                try? decoder.reset()
                written = nil
            }
            guard let written else { continue }
            precondition((0...requested).contains(written), "decoder wrote outside the buffer")
            if flags & 3 == 0, let frameCount { precondition(written == frameCount, "decoded length differs from the packet's") }
            precondition(UnsafeMutableBufferPointer(rebasing: buffer[..<written]).isAllFinite, "decoded samples not finite")
        }
    }
}
