/// What one peer's SDP (RFC 4566, as RFC 3264 uses it) says about the Opus stream it takes: where it
/// receives (`c=` and the `m=audio` port), the payload type it expects (any dynamic type 96–127 that
/// `a=rtpmap` maps to opus/48000/2, RFC 7587), its Opus preferences (`a=fmtp`, `a=ptime`, `a=maxptime`),
/// whether RTCP shares the port (`a=rtcp-mux`), and the keys it sends with (`a=crypto`, under RTP/SAVP, or
/// under RTP/AVP as ffmpeg writes it).
///
/// The text is untrusted: its size and line count are bounded, every number is range-checked, and a malformed
/// or unsupported description is refused with an `SDPError` naming the line. The first `m=audio` line with an
/// Opus payload type is used; other media are skipped. Not real-time safe.
public struct PeerDescription: Sendable, Hashable {
    /// Where the peer receives RTP (and RTCP, with `rtcpMux`).
    public var address: SocketAddress
    public var payloadType: UInt8
    public var opus = OpusParameters()
    public var rtcpMux = false
    /// RTP/SAVP (or SAVPF): SRTP, keyed by `crypto`.
    public var isSecure = false
    /// The suites and keys offered, in the order given; only suites this build knows.
    public var crypto: [SDPCrypto] = []

    public static let maximumByteCount = 65536
    public static let maximumLineCount = 1000
    static let dynamicPayloadTypes: ClosedRange<UInt8> = 96...127

    public init(address: SocketAddress, payloadType: UInt8) {
        self.address = address
        self.payloadType = payloadType
    }

    /// Parses `text`. Numeric addresses only: `c=` is never looked up in DNS.
    public init(parsing text: String) throws(SDPError) {
        guard text.utf8.count <= Self.maximumByteCount else {
            throw SDPError("longer than \(Self.maximumByteCount) bytes")
        }
        // Lines end in CRLF (one Character in Swift) or, leniently, LF.
        var lines = text.split(omittingEmptySubsequences: false) { $0 == "\r\n" || $0 == "\n" }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard lines.count <= Self.maximumLineCount else { throw SDPError("more than \(Self.maximumLineCount) lines") }
        var parser = Parser()
        for (index, line) in lines.enumerated() {
            parser.currentLine = index + 1
            do { try parser.read(line, isFirst: index == 0) } catch {
                throw SDPError(error.reason, line: error.line ?? index + 1)
            }
        }
        self = try parser.finish(lineCount: lines.count)
    }
}

extension PeerDescription {
    /// The line-by-line state of a parse.
    private struct Parser {
        enum Section { case session, chosenAudio, skipped }

        var section = Section.session
        var sessionHost: Substring?
        var mediaHost: Substring?
        var port: UInt16 = 0
        var mediaLine = 0
        var isSecure = false
        var formats: [UInt8] = []
        /// Payload types `a=rtpmap` maps to Opus, with their line.
        var opusTypes: [UInt8: Int] = [:]
        var fmtp: [UInt8: (value: Substring, line: Int)] = [:]
        var ptime: Int?
        var maxptime: Int?
        var rtcpMux = false
        var crypto: [SDPCrypto] = []
        var sawVersion = false
        var sawChosen = false
        /// Set by `PeerDescription.init` before each line, for errors found later.
        var currentLine = 0

        mutating func read(_ line: Substring, isFirst: Bool) throws(SDPError) {
            let bytes = line.utf8
            guard bytes.count >= 2, let type = bytes.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(type),
                  bytes[bytes.index(after: bytes.startIndex)] == UInt8(ascii: "=") else {
                throw SDPError("expected TYPE=VALUE (a lowercase letter, '=')")
            }
            guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7f || $0 == 0x09 }) else {
                throw SDPError("control character in the line")
            }
            let value = line.dropFirst(2)
            if isFirst {
                guard type == UInt8(ascii: "v"), value == "0" else { throw SDPError("an SDP starts with v=0") }
                sawVersion = true
                return
            }
            switch (type, section) {
            case (UInt8(ascii: "m"), _): try readMedia(value)
            case (UInt8(ascii: "c"), .session): sessionHost = try Self.connectionHost(value)
            case (UInt8(ascii: "c"), .chosenAudio): mediaHost = try Self.connectionHost(value)
            case (UInt8(ascii: "a"), .session), (UInt8(ascii: "a"), .chosenAudio): try readAttribute(value)
            default: break
            }
        }

        /// "IN IP4 ADDRESS[/TTL[/N]]" or "IN IP6 ADDRESS[/N]": the address.
        static func connectionHost(_ value: Substring) throws(SDPError) -> Substring {
            let fields = value.split(separator: " ")
            guard fields.count == 3, fields[0] == "IN", fields[1] == "IP4" || fields[1] == "IP6" else {
                throw SDPError("c= must be IN IP4 ADDRESS or IN IP6 ADDRESS")
            }
            let host = fields[2].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard !host.isEmpty, host.count <= 64 else { throw SDPError("c= has no address") }
            return host
        }

        mutating func readMedia(_ value: Substring) throws(SDPError) {
            if sawChosen { section = .skipped; return }
            let fields = value.split(separator: " ")
            guard fields.count >= 4 else { throw SDPError("m= needs MEDIA PORT PROTOCOL FORMAT...") }
            guard fields[0] == "audio" else { section = .skipped; return }
            let portText = fields[1].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)[0]
            guard portText.count <= 5, let number = UInt16(portText) else {
                throw SDPError("m=audio port '\(fields[1].prefix(12))' is not 0–65535")
            }
            switch fields[2] {
            case "RTP/AVP", "RTP/AVPF": isSecure = false
            case "RTP/SAVP", "RTP/SAVPF": isSecure = true
            default:
                throw SDPError("profile \(fields[2].prefix(24)) is not supported (RTP/AVP, or RTP/SAVP with a=crypto)")
            }
            var types: [UInt8] = []
            for field in fields.dropFirst(3) {
                guard field.count <= 3, let type = UInt8(field), type <= 127 else {
                    throw SDPError("m=audio format '\(field.prefix(12))' is not an RTP payload type 0–127")
                }
                types.append(type)
            }
            section = .chosenAudio
            sawChosen = true
            mediaLine = currentLine
            port = number
            formats = types
        }

        mutating func readAttribute(_ value: Substring) throws(SDPError) {
            let colon = value.firstIndex(of: ":")
            let name = colon.map { value[..<$0] } ?? value
            let argument = colon.map { value[value.index(after: $0)...] } ?? ""
            switch name {
            case "rtpmap":
                let (type, rest) = try Self.typeAndRest(argument, attribute: "rtpmap")
                let encoding = rest.split(separator: "/", omittingEmptySubsequences: false)
                guard encoding.first?.lowercased() == "opus" else { return }
                guard encoding.count == 3, encoding[1] == "48000", encoding[2] == "2" else {
                    throw SDPError("a=rtpmap: Opus must be opus/48000/2 (RFC 7587), not \(rest.prefix(24))")
                }
                opusTypes[type] = currentLine
            case "fmtp":
                let (type, rest) = try Self.typeAndRest(argument, attribute: "fmtp")
                fmtp[type] = (rest, currentLine)
            case "ptime": ptime = try OpusParameters.integer("a=ptime", Self.wholeMilliseconds(argument), in: OpusParameters.packetRange)
            case "maxptime": maxptime = try OpusParameters.integer("a=maxptime", Self.wholeMilliseconds(argument), in: OpusParameters.packetRange)
            case "rtcp-mux": rtcpMux = true
            case "crypto":
                guard section == .chosenAudio else { throw SDPError("a=crypto belongs in the m=audio section") }
                if let attribute = try SDPCrypto.parse(argument) {
                    guard !crypto.contains(where: { $0.tag == attribute.tag }) else {
                        throw SDPError("a=crypto tag \(attribute.tag) given twice")
                    }
                    crypto.append(attribute)
                }
            default: break
            }
        }

        static func typeAndRest(_ argument: Substring, attribute: String) throws(SDPError) -> (UInt8, Substring) {
            let parts = argument.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].count <= 3, let type = UInt8(parts[0]), type <= 127 else {
                throw SDPError("a=\(attribute) needs PAYLOAD-TYPE VALUE")
            }
            return (type, parts[1].trimmingSpaces)
        }

        /// "20" or "20.0" (some tools write decimals).
        static func wholeMilliseconds(_ text: Substring) -> Substring {
            guard let dot = text.firstIndex(of: ".") else { return text }
            return text[text.index(after: dot)...].allSatisfy { $0 == "0" } ? text[..<dot] : text
        }

        func finish(lineCount: Int) throws(SDPError) -> PeerDescription {
            guard sawVersion else { throw SDPError("empty: an SDP starts with v=0") }
            guard sawChosen else { throw SDPError("no m=audio line") }
            guard port != 0 else { throw SDPError("m=audio port 0: the stream is disabled", line: mediaLine) }
            guard let type = formats.first(where: { opusTypes[$0] != nil }) else {
                throw SDPError("m=audio offers no payload type mapped to opus/48000/2 by a=rtpmap", line: mediaLine)
            }
            guard PeerDescription.dynamicPayloadTypes.contains(type) else {
                throw SDPError("Opus payload type \(type) is not dynamic (96–127)", line: opusTypes[type])
            }
            guard let host = mediaHost ?? sessionHost else { throw SDPError("no c= line for m=audio", line: mediaLine) }
            let address: SocketAddress
            do { address = try SocketAddress.numeric(host: String(host), port: port) } catch {
                throw SDPError("c= address '\(host)' is not a numeric IPv4 or IPv6 address")
            }
            var description = PeerDescription(address: address, payloadType: type)
            if let parameters = fmtp[type] {
                do { try description.opus.read(fmtp: parameters.value) } catch {
                    throw SDPError(error.reason, line: parameters.line)
                }
            }
            if let ptime { description.opus.packetMilliseconds = ptime }
            if let maxptime { description.opus.maxPacketMilliseconds = maxptime }
            description.rtcpMux = rtcpMux
            description.crypto = crypto
            if isSecure && crypto.isEmpty {
                throw SDPError("RTP/SAVP without an a=crypto of a supported suite (\(SRTPSuite.allCases.map(\.rawValue).joined(separator: ", ")))", line: mediaLine)
            }
            // ffmpeg writes its SRTP description as RTP/AVP with a=crypto: the keys say it is SRTP.
            description.isSecure = isSecure || !crypto.isEmpty
            return description
        }
    }
}
