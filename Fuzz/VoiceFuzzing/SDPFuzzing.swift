import VoiceCall

/// Parses the input as an SDP. What parses must be a usable Opus stream (a dynamic payload type, a port, keys
/// under RTP/SAVP only), and written back out as voicepeer writes it, must read the same.
enum SDPFuzzing {
    static func run(_ input: UnsafeRawBufferPointer) {
        let text = String(decoding: input, as: UTF8.self)
        guard let description = try? PeerDescription(parsing: text) else { return }
        precondition((96...127).contains(description.payloadType), "a static payload type was taken for Opus")
        precondition(description.address.port != 0, "a disabled stream was taken")
        precondition(description.isSecure != description.crypto.isEmpty, "keys and profile disagree")
        guard let format = try? OpusFormat(sampleRate: 48000, frameDurationMilliseconds: 20) else { return }
        let written = SessionDescription(
            destination: description.address, origin: description.address, payloadType: description.payloadType,
            format: format, bitsPerSecond: 24000, inbandFEC: description.opus.useInbandFEC ?? false,
            dtx: description.opus.useDTX ?? false, sessionID: 1, crypto: description.crypto)
        do {
            let again = try PeerDescription(parsing: written.text)
            precondition(again.address == description.address && again.payloadType == description.payloadType,
                         "address or payload type changed in a round trip")
            precondition(again.crypto == description.crypto, "keys changed in a round trip")
        } catch {
            preconditionFailure("a written SDP does not parse: \(error)")
        }
    }
}
