import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO

/// `voicepeer sdp`: writes this peer's session description without a call (RFC 3264's view: where it receives,
/// what it sends), for the remote's `--remote-sdp` and this peer's `--local-sdp`. With `--srtp`, RTP/SAVP and a
/// fresh master key per suite from the system's CSPRNG, in a file only its owner can read.
struct SDPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sdp",
        abstract: "Write this peer's SDP (where it receives, what it sends; with --srtp its SRTP keys).")

    @Option(help: "Local HOST:PORT this peer will receive on (numeric address).")
    var listen: String
    @Flag(help: "SRTP: RTP/SAVP with a=crypto keys (AES_CM_128_HMAC_SHA1_80, and AEAD_AES_128_GCM when libsrtp2 offers it).")
    var srtp = false
    @Option(name: .customLong("payload-type"), help: "Dynamic RTP payload type, 96-127.")
    var payloadType: UInt8 = RTPHeader.defaultPayloadType
    @OptionGroup var stream: StreamOptions
    @Option(help: "Where to write the SDP (created 0600 with --srtp).")
    var out: String

    func validate() throws {
        guard (96...127).contains(payloadType) else { throw ValidationError("--payload-type must be within 96–127") }
    }

    func run() throws {
        try CommandFailure.reporting {
            guard let colon = listen.lastIndex(of: ":"), let port = UInt16(listen[listen.index(after: colon)...]),
                  port != 0 else {
                throw CommandFailure("--listen takes HOST:PORT with a port other than 0 (got \(listen))")
            }
            var host = listen[..<colon]
            if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
            let address: SocketAddress
            do { address = try SocketAddress.numeric(host: String(host), port: port) } catch {
                throw CommandFailure("--listen needs a numeric IPv4 or IPv6 address (the SDP's c= line), got \(listen)")
            }
            let codecRate = OpusFormat.nearestSupportedRate(atLeast: stream.voiceRate)
            let crypto = srtp ? SRTPSuite.available.enumerated().map { index, suite in
                SDPCrypto(tag: index + 1, key: .random(suite: suite))
            } : []
            let description = SessionDescription(
                destination: address, origin: address, payloadType: payloadType,
                format: try OpusFormat(sampleRate: codecRate, frameDurationMilliseconds: stream.frameMilliseconds),
                bitsPerSecond: stream.bitrate, inbandFEC: stream.fec, dtx: stream.dtx, sessionID: UInt64(time(nil)),
                crypto: crypto)
            try TextFile.write(description.text, to: out, ownerOnly: srtp)
        }
    }
}
