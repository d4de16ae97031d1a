#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO
import VoiceIOSimulation

/// Strangers' datagrams: well-formed RTP whose Opus payload is a loud tone (so a leak is audible and
/// detectable), RTCP-looking and random bytes. Built in advance; `next` only picks and stamps one.
struct ForeignPackets {
    /// The flood's tone: loud, steady, at a frequency `netimpair tone` looks for.
    static let toneHertz = 1000.0
    static let toneAmplitude: Float = 0.7

    private let tonePayloads: [[UInt8]]
    private var generator: SplitMix64
    private var sequenceNumber: UInt16
    private var timestamp: UInt32
    private var toneIndex = 0
    let payloadType: UInt8

    init(payloadType: UInt8, seed: UInt64) throws {
        self.payloadType = payloadType
        tonePayloads = try Self.encodeTone(packetCount: 50)
        generator = SplitMix64(seed: seed)
        sequenceNumber = UInt16.random(in: .min ... .max, using: &generator)
        timestamp = UInt32.random(in: .min ... .max, using: &generator)
    }

    /// One second of the tone as 20 ms Opus packets at 16 kHz, phase-continuous so they loop cleanly.
    static func encodeTone(packetCount: Int) throws -> [[UInt8]] {
        let format = try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 20)
        let encoder = try OpusEncoder(.init(format: format, bitsPerSecond: 32000))
        let frameCount = 320
        var pcm = [Float](repeating: 0, count: frameCount)
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketByteCount)
        var payloads: [[UInt8]] = []
        for index in 0..<packetCount {
            for frame in 0..<frameCount {
                let time = Double(index * frameCount + frame) / 16000
                pcm[frame] = toneAmplitude * Float(sin(2 * Double.pi * toneHertz * time))
            }
            let byteCount = try pcm.withUnsafeBufferPointer { input in
                try packet.withUnsafeMutableBytes { try encoder.encode(input, into: $0) }
            }
            payloads.append(Array(packet[..<byteCount]))
        }
        return payloads
    }

    /// RTP with `ssrc` and the tone as payload; sequence numbers and timestamps advance as a real stream's would.
    mutating func toneRTP(ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let header = RTPHeader(payloadType: payloadType, sequenceNumber: sequenceNumber, timestamp: timestamp, ssrc: ssrc)
        sequenceNumber &+= 1
        timestamp &+= 960
        let payload = tonePayloads[toneIndex]
        toneIndex = (toneIndex + 1) % tonePayloads.count
        return payload.withUnsafeBytes { RTPPacket(header: header, payload: $0).write(into: buffer) } ?? 0
    }

    /// `real` (an RTP datagram) with its SSRC replaced: the right payload and numbering from the wrong source.
    static func respoof(_ real: UnsafeRawBufferPointer, ssrc: UInt32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard real.count >= RTPHeader.fixedByteCount, real.count <= buffer.count else { return 0 }
        buffer.copyMemory(from: real)
        withUnsafeBytes(of: ssrc.bigEndian) { ssrcBytes in
            UnsafeMutableRawBufferPointer(rebasing: buffer[8..<12]).copyMemory(from: ssrcBytes)
        }
        return real.count
    }

    /// Random bytes of a random length (1 to 1400); every fourth starts like an RTCP packet (version 2, PT 200-204).
    mutating func garbage(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let byteCount = Int.random(in: 1...min(1400, buffer.count), using: &generator)
        for offset in stride(from: 0, to: byteCount, by: 8) {
            withUnsafeBytes(of: generator.next()) { word in
                UnsafeMutableRawBufferPointer(rebasing: buffer[offset..<min(offset + 8, byteCount)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: word[..<min(8, byteCount - offset)]))
            }
        }
        if byteCount >= 2, generator.next() % 4 == 0 {
            buffer[0] = 0x80
            buffer[1] = UInt8.random(in: 200...204, using: &generator)
        }
        return byteCount
    }

    mutating func randomSSRC() -> UInt32 { UInt32.random(in: .min ... .max, using: &generator) }
}
