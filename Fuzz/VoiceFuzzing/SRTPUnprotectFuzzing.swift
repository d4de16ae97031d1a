import VoiceCall

/// The SRTP receive path. The first byte picks the mode:
/// - even: the rest is a datagram from the network, unprotected as SRTP and as SRTCP with a fixed key;
/// - odd: the rest is a plain RTP packet, protected with the key, one byte of it flipped (the second byte of
///   input says which; 0 flips none) and unprotected: so the decrypting path after authentication sees every
///   header shape (CSRCs, extensions, padding) the fuzzer makes, and a flip must be caught.
/// What unprotects must be no longer than what came in and never shorter than an RTP or RTCP header.
/// The contexts live across inputs (creating one costs milliseconds with NSS); the protected packets take the
/// next sequence number of a counter so the replay window never refuses an intact one.
enum SRTPUnprotectFuzzing {
    static let key = try! SRTPMasterKey(suite: .aesCM128HMACSHA1_80,
                                        base64: "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwd")
    nonisolated(unsafe) static let network = try! SRTPContext(direction: .inbound, key: key)
    nonisolated(unsafe) static let outbound = try! SRTPContext(direction: .outbound, key: key)
    nonisolated(unsafe) static let inbound = try! SRTPContext(direction: .inbound, key: key)
    nonisolated(unsafe) static var sequenceNumber: UInt16 = 0

    static func run(_ input: UnsafeRawBufferPointer) {
        guard input.count >= 2, input.count <= 1500 else { return }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500 + SRTPContext.maximumTrailerByteCount,
                                                            alignment: 8)
        defer { buffer.deallocate() }
        let body = UnsafeRawBufferPointer(rebasing: input[2...])
        buffer.copyMemory(from: body)
        if input[0] % 2 == 0 {
            if let length = try? network.unprotectRTP(buffer, byteCount: body.count) {
                precondition(length >= 12 && length <= body.count, "unprotected RTP length \(length) of \(body.count)")
            }
            buffer.copyMemory(from: body)
            if let length = try? network.unprotectRTCP(buffer, byteCount: body.count) {
                precondition(length >= 8 && length <= body.count, "unprotected RTCP length \(length) of \(body.count)")
            }
            return
        }
        guard body.count >= 12 else { return }
        sequenceNumber &+= 1
        buffer[2] = UInt8(sequenceNumber >> 8)
        buffer[3] = UInt8(sequenceNumber & 0xff)
        buffer.storeBytes(of: UInt32(0x5eed).bigEndian, toByteOffset: 8, as: UInt32.self)
        let plain = Array(buffer[..<body.count])
        guard let protected = try? outbound.protectRTP(buffer, byteCount: body.count) else { return }
        let flip = Int(input[1])
        if flip > 0 { buffer[(flip - 1) % protected] ^= 0x01 }
        do {
            let length = try inbound.unprotectRTP(buffer, byteCount: protected)
            precondition(flip == 0, "a flipped bit passed authentication")
            precondition(length == body.count, "round trip changed the length")
            precondition(buffer[..<length].elementsEqual(plain), "round trip changed the bytes")
        } catch {
            precondition(flip > 0, "an intact packet failed: \(error)")
        }
    }
}
