import Testing
@testable import VoiceCall

@Suite struct OpusCodecTests {
    /// Encodes `signal` frame by frame and decodes every packet; returns packets and decoded PCM.
    static func roundTrip(_ signal: [Float], encoder: OpusEncoder, decoder: OpusDecoder) throws -> (packets: [[UInt8]], decoded: [Float]) {
        let frameCount = encoder.configuration.format.frameCount
        var packets: [[UInt8]] = []
        var decoded: [Float] = []
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketByteCount)
        var pcm = [Float](repeating: 0, count: frameCount)
        for start in stride(from: 0, to: signal.count - frameCount + 1, by: frameCount) {
            let byteCount = try signal[start..<(start + frameCount)].withUnsafeBufferPointer { frame in
                try packet.withUnsafeMutableBytes { try encoder.encode(frame, into: $0) }
            }
            packets.append(Array(packet[..<byteCount]))
            let decodedCount = try packets.last!.withUnsafeBytes { bytes in
                try pcm.withUnsafeMutableBufferPointer { try decoder.decode(bytes, into: $0) }
            }
            #expect(decodedCount == frameCount)
            decoded += pcm
        }
        return (packets, decoded)
    }

    /// Decoded speech matches the input once aligned by the encoder's lookahead.
    @Test(arguments: [16000, 48000])
    func roundTripCorrelates(sampleRate: Int) throws {
        let format = try OpusFormat(sampleRate: sampleRate, frameDurationMilliseconds: 20)
        let encoder = try OpusEncoder(.init(format: format, bitsPerSecond: 32000))
        let decoder = try OpusDecoder(sampleRate: sampleRate)
        #expect(encoder.lookaheadFrameCount > 0 && encoder.lookaheadFrameCount < format.frameCount)
        let signal = TestSignals.voice(sampleRate: sampleRate, frameCount: sampleRate)
        let (packets, decoded) = try Self.roundTrip(signal, encoder: encoder, decoder: decoder)
        #expect(packets.count == 50)
        let aligned = TestSignals.alignment(signal, decoded, nominal: encoder.lookaheadFrameCount, radius: sampleRate / 1000,
                                            skip: sampleRate / 10)
        #expect(aligned.correlation >= 0.9, "correlation \(aligned.correlation) at lag \(aligned.lag)")
    }

    /// PLC produces exactly the requested frame count, and its first frame continues the signal's level.
    @Test func concealmentFillsAFrame() throws {
        let format = try OpusFormat(sampleRate: 16000)
        let encoder = try OpusEncoder(.init(format: format))
        let decoder = try OpusDecoder(sampleRate: 16000)
        _ = try Self.roundTrip(TestSignals.voice(sampleRate: 16000, frameCount: 3200), encoder: encoder, decoder: decoder)
        var pcm = [Float](repeating: 0, count: format.frameCount)
        let count = try pcm.withUnsafeMutableBufferPointer { try decoder.conceal(into: $0) }
        #expect(count == format.frameCount)
        #expect(TestSignals.rms(pcm[...]) > 0.01)
    }

    /// With in-band FEC, a lost frame rebuilt from the next packet is closer to the original than concealment.
    @Test func fecBeatsConcealment() throws {
        let format = try OpusFormat(sampleRate: 16000)
        let encoder = try OpusEncoder(.init(format: format, bitsPerSecond: 32000, inbandFEC: true, expectedPacketLossPercent: 20))
        let signal = TestSignals.voice(sampleRate: 16000, frameCount: 32000)
        let (packets, decoded) = try Self.roundTrip(signal, encoder: encoder, decoder: OpusDecoder(sampleRate: 16000))
        let lag = TestSignals.alignment(signal, decoded, nominal: encoder.lookaheadFrameCount, radius: 16, skip: 1600).lag
        let frameCount = format.frameCount
        // Lose frames whose next packet carries FEC (the encoder leaves it out after frames it judged inactive).
        let lost = Set(stride(from: 10, to: packets.count - 1, by: 10).filter { index in
            packets[index + 1].withUnsafeBytes { OpusDecoder.carriesFEC($0) }
        })
        #expect(lost.count >= 5)

        func errorEnergy(useFEC: Bool) throws -> Double {
            let decoder = try OpusDecoder(sampleRate: 16000)
            var output: [Float] = []
            var pcm = [Float](repeating: 0, count: frameCount)
            for index in packets.indices {
                try pcm.withUnsafeMutableBufferPointer { buffer in
                    if !lost.contains(index) {
                        _ = try packets[index].withUnsafeBytes { try decoder.decode($0, into: buffer) }
                    } else if useFEC {
                        _ = try packets[index + 1].withUnsafeBytes { try decoder.recover(fromNext: $0, into: buffer) }
                    } else {
                        _ = try decoder.conceal(into: buffer)
                    }
                }
                output += pcm
            }
            return lost.reduce(0.0) { sum, index in
                (index * frameCount..<(index + 1) * frameCount).reduce(sum) { sum, sample in
                    let difference = Double(output[sample + lag] - signal[sample])
                    return sum + difference * difference
                }
            }
        }
        let fecError = try errorEnergy(useFEC: true)
        let plcError = try errorEnergy(useFEC: false)
        #expect(fecError < plcError * 0.5, "FEC error \(fecError), PLC error \(plcError)")
    }

    @Test func refusesBadSettings() throws {
        #expect(throws: OpusError.self) { try OpusFormat(sampleRate: 11025) }
        #expect(throws: OpusError.self) { try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 25) }
        #expect(OpusFormat.nearestSupportedRate(atLeast: 11025) == 12000)
        let format = try OpusFormat(sampleRate: 16000)
        #expect(throws: OpusError.self) { try OpusEncoder(.init(format: format, complexity: 42)) }
        #expect(throws: OpusError.self) { try OpusEncoder(.init(format: format, bitsPerSecond: 100)) }
        #expect(throws: OpusError.self) { try OpusDecoder(sampleRate: 44100) }
        do {
            _ = try OpusFormat(sampleRate: 16000, frameDurationMilliseconds: 25)
        } catch {
            #expect(error.description.contains("25 ms"))
        }
    }

    /// A wrong-sized frame and a corrupt packet are typed errors carrying libopus's message.
    @Test func reportsLibraryErrors() throws {
        let format = try OpusFormat(sampleRate: 16000)
        let encoder = try OpusEncoder(.init(format: format))
        let short = [Float](repeating: 0, count: 100)
        var packet = [UInt8](repeating: 0, count: 1275)
        #expect(throws: OpusError.self) {
            try short.withUnsafeBufferPointer { frame in try packet.withUnsafeMutableBytes { try encoder.encode(frame, into: $0) } }
        }
        let decoder = try OpusDecoder(sampleRate: 16000)
        let corrupt: [UInt8] = [0xff, 0xff, 0xff]
        var pcm = [Float](repeating: 0, count: 320)
        do {
            _ = try corrupt.withUnsafeBytes { bytes in try pcm.withUnsafeMutableBufferPointer { try decoder.decode(bytes, into: $0) } }
            Issue.record("a corrupt packet decoded")
        } catch {
            #expect(String(describing: error).contains("opus_decode_float"))
            #expect(String(describing: error).contains(OpusError.message(code: -4)))
        }
    }
}
