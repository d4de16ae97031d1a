/// The Opus parameters an SDP's `a=fmtp` and `a=ptime`/`a=maxptime` carry (RFC 7587 §6.1): what the
/// describing peer prefers to receive. Nil when absent.
public struct OpusParameters: Sendable, Hashable {
    public var useInbandFEC: Bool?
    public var useDTX: Bool?
    /// Hz, 8000–48000.
    public var maxPlaybackRate: Int?
    public var stereo: Bool?
    public var packetMilliseconds: Int?
    public var maxPacketMilliseconds: Int?

    public init() {}

    /// Reads one `a=fmtp` value ("useinbandfec=1; maxplaybackrate=16000"). Unknown parameters are ignored
    /// (RFC 4566 §6); a known one with a bad value is refused.
    mutating func read(fmtp: Substring) throws(SDPError) {
        for item in fmtp.split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces }
            guard pair.count == 2, !pair[0].isEmpty else { throw SDPError("a=fmtp: '\(item.trimmingSpaces)' is not NAME=VALUE") }
            let (name, value) = (pair[0].lowercased(), pair[1])
            switch name {
            case "useinbandfec": useInbandFEC = try Self.flag(name, value)
            case "usedtx": useDTX = try Self.flag(name, value)
            case "stereo": stereo = try Self.flag(name, value)
            case "maxplaybackrate": maxPlaybackRate = try Self.integer(name, value, in: 8000...48000)
            case "ptime": packetMilliseconds = try Self.integer(name, value, in: Self.packetRange)
            case "maxptime": maxPacketMilliseconds = try Self.integer(name, value, in: Self.packetRange)
            default: continue
            }
        }
    }

    /// Opus packets last 2.5–120 ms; SDP gives whole milliseconds (3 stands for 2.5).
    static let packetRange = 2...120

    static func flag(_ name: String, _ value: Substring) throws(SDPError) -> Bool {
        switch value {
        case "0": return false
        case "1": return true
        default: throw SDPError("\(name) must be 0 or 1, not '\(value.prefix(20))'")
        }
    }

    static func integer(_ name: String, _ value: Substring, in range: ClosedRange<Int>) throws(SDPError) -> Int {
        guard value.count <= 9, let number = Int(value), range.contains(number) else {
            throw SDPError("\(name) must be a whole number within \(range.lowerBound)–\(range.upperBound), not '\(value.prefix(20))'")
        }
        return number
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var text = self
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
