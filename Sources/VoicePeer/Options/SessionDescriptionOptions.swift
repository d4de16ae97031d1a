import ArgumentParser
import VoiceCall

/// `--local-sdp` and `--remote-sdp` of `voicepeer call`: the call's addresses, payload types, Opus preferences
/// and SRTP keys from session descriptions (RFC 4566/3264) instead of, or besides, `--listen`/`--remote`.
///
/// MINE says where this peer receives and the key it sends with; THEIRS where the remote receives, the payload
/// type of the stream both ways (tools send with the type they describe) and the key it sends with. `--remote` overrides THEIRS's address
/// (for a tool's SDP that describes the stream it sends to us, like ffmpeg's).
struct SessionDescriptionOptions: ParsableArguments {
    @Option(name: .customLong("local-sdp"), help: "This peer's SDP (voicepeer sdp): where it listens and, with RTP/SAVP, the key it sends with.")
    var localSDP: String?
    @Option(name: .customLong("remote-sdp"), help: "The remote's SDP: where it receives, its payload type and Opus parameters, and with RTP/SAVP the key it sends with.")
    var remoteSDP: String?

    /// Where to listen and the call's configuration from the descriptions and the addresses given on the
    /// command line. One clear `CommandFailure` line when they are missing, malformed or disagree.
    func resolve(listen: String?, remote: String?) throws
        -> (listen: SocketAddress, configuration: CallConfiguration, remotePreferences: OpusParameters?) {
        let mine = try localSDP.map { try Self.load($0) }
        let theirs = try remoteSDP.map { try Self.load($0) }
        let listenAddress: SocketAddress
        switch (listen, mine) {
        case (let listen?, let mine?):
            listenAddress = try SocketAddress.resolve(listen)
            guard listenAddress == mine.address else {
                throw CommandFailure("--listen \(listen) differs from --local-sdp's address \(mine.address)")
            }
        case (let listen?, nil): listenAddress = try SocketAddress.resolve(listen)
        case (nil, let mine?): listenAddress = mine.address
        case (nil, nil): throw CommandFailure("give --listen HOST:PORT or --local-sdp FILE")
        }
        let remoteAddress: SocketAddress
        if let remote {
            remoteAddress = try SocketAddress.resolve(remote)
        } else if let theirs {
            guard theirs.address != listenAddress else {
                throw CommandFailure("--remote-sdp names this peer's own address \(listenAddress) (it describes a stream sent to us, as ffmpeg's does): give --remote with the sender's HOST:PORT")
            }
            remoteAddress = theirs.address
        } else {
            throw CommandFailure("give --remote HOST:PORT or --remote-sdp FILE")
        }
        if remoteAddress.port == 0 { throw CommandFailure("the remote needs a port other than 0") }
        var configuration = CallConfiguration(remote: remoteAddress)
        // One payload type both ways, as tools do: the remote's when known (it sends with the type it described).
        if let theirs {
            configuration.payloadType = theirs.payloadType
            configuration.receivedPayloadType = theirs.payloadType
        } else if let mine {
            configuration.receivedPayloadType = mine.payloadType
        }
        do {
            configuration.srtp = try SRTPKeys.agree(local: mine?.crypto ?? [], remote: theirs?.crypto ?? [])
        } catch {
            throw CommandFailure("SRTP refused: \(error)")
        }
        return (listenAddress, configuration, theirs?.opus)
    }

    /// The remote's Opus preferences applied to the stream we send: its `useinbandfec`/`usedtx` turn FEC and
    /// DTX on, and our frames are shortened to its `maxptime`.
    static func apply(_ opus: OpusParameters?, to configuration: inout CallConfiguration) {
        guard let opus else { return }
        if opus.useInbandFEC == true { configuration.inbandFEC = true }
        if opus.useDTX == true { configuration.dtx = true }
        if let maximum = opus.maxPacketMilliseconds, configuration.frameDurationMilliseconds > maximum {
            configuration.frameDurationMilliseconds = OpusFormat.frameDurationsMilliseconds.last { $0 <= maximum } ?? 10
        }
    }

    static func load(_ path: String) throws -> PeerDescription {
        let text = try TextFile.read(path, maximumByteCount: PeerDescription.maximumByteCount)
        do { return try PeerDescription(parsing: text) } catch { throw CommandFailure("\(path): \(error)") }
    }
}
