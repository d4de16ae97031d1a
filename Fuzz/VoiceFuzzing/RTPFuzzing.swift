import VoiceCall

/// Parses the input as an RTP datagram, with and without an expected payload type. A packet that parses must
/// point inside the datagram, and writing it out and parsing that again must give the same header and payload.
enum RTPFuzzing {
    static func run(_ input: UnsafeRawBufferPointer) {
        let kind = DatagramKind(classifying: input)
        precondition((kind == .runt) == (input.count < 2), "runt classification disagrees with the length")
        _ = try? RTPPacket.parse(input, expectedPayloadType: RTPHeader.defaultPayloadType)
        guard let packet = try? RTPPacket.parse(input) else { return }
        precondition(!packet.payload.isEmpty, "parsed an empty payload")
        precondition(packet.payload.isWithin(input), "payload outside the datagram")
        precondition(packet.header.payloadType < 128, "payload type above 7 bits")

        let datagram = UnsafeMutableRawBufferPointer.allocate(byteCount: RTPHeader.fixedByteCount + packet.payload.count,
                                                              alignment: 8)
        defer { datagram.deallocate() }
        let byteCount = packet.write(into: datagram)
        precondition(byteCount == datagram.count, "written datagram has the wrong length")
        do {
            let again = try RTPPacket.parse(UnsafeRawBufferPointer(datagram))
            precondition(again.header == packet.header, "header changed in a round trip")
            precondition(again.payload.elementsEqual(packet.payload), "payload changed in a round trip")
        } catch {
            preconditionFailure("a written packet does not parse: \(error)")
        }
    }
}

extension UnsafeRawBufferPointer {
    /// Whether every byte of `self` lies inside `outer`.
    func isWithin(_ outer: UnsafeRawBufferPointer) -> Bool {
        guard let base = baseAddress, let outerBase = outer.baseAddress else { return isEmpty }
        return base >= outerBase && base + count <= outerBase + outer.count
    }
}
