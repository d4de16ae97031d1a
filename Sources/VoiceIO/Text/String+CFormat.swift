#if canImport(Glibc)
import Glibc
#endif

extension String {
    /// Formats `arguments` the way C's printf does, for the conversions our figures and messages use, without
    /// Foundation (whose `String(format:)` needs the full Foundation and ICU: several megabytes resident in a
    /// peer): `%d`, `%i`, `%u` and `%lld` take any integer; `%f`, `%e`, `%g` take any floating-point number (or
    /// an integer), with C's flags, width and precision (`%+.1f`, `%6.1f`); `%@` and `%s` take any value, as
    /// `"\(value)"`, with a width right-aligned (`-` flag: left-aligned); `%%` is a percent sign. A conversion
    /// whose argument is missing or of the wrong kind is copied as written, so a mistake shows in the text.
    /// Package-internal (not API). Not real-time safe: allocates.
    package init(cFormat format: String, _ arguments: Any...) {
        var result = ""
        var remaining = arguments[...]
        var characters = format[...]
        while let percent = characters.firstIndex(of: "%") {
            result += characters[..<percent]
            characters = characters[characters.index(after: percent)...]
            let modifiers = characters.prefix { "-+ #0123456789.hlqjzt".contains($0) }
            characters = characters[modifiers.endIndex...]
            guard let conversion = characters.first else {
                result += "%" + modifiers
                break
            }
            characters = characters.dropFirst()
            if conversion == "%" {
                result += "%"
                continue
            }
            let flagsWidthPrecision = String(modifiers.filter { !"hlqjzt".contains($0) })
            let argument = remaining.popFirst()
            if let text = argument.flatMap({ Self.converted($0, conversion, flagsWidthPrecision) }) {
                result += text
            } else {
                result += "%" + modifiers + String(conversion)
            }
        }
        result += characters
        self = result
    }

    /// One argument under one conversion, or nil when the argument does not fit it.
    private static func converted(_ argument: Any, _ conversion: Character, _ flagsWidthPrecision: String) -> String? {
        switch conversion {
        case "d", "i", "u":
            guard let integer = argument as? any BinaryInteger else { return nil }
            return printed("%" + flagsWidthPrecision + "lld", Int64(truncatingIfNeeded: integer))
        case "f", "F", "e", "E", "g", "G":
            let number: Double
            if let floating = argument as? any BinaryFloatingPoint {
                number = Double(floating)
            } else if let integer = argument as? any BinaryInteger {
                number = Double(integer)
            } else {
                return nil
            }
            return printed("%" + flagsWidthPrecision + String(conversion), number)
        case "@", "s":
            let text = "\(argument)"
            let width = Int(flagsWidthPrecision.filter(\.isNumber)) ?? 0
            let padding = String(repeating: " ", count: Swift.max(0, width - text.count))
            return flagsWidthPrecision.hasPrefix("-") ? text + padding : padding + text
        default:
            return nil
        }
    }

    /// C's vsnprintf of one argument under a one-conversion `specification`.
    private static func printed(_ specification: String, _ argument: CVarArg) -> String {
        let length = withVaList([argument]) { vsnprintf(nil, 0, specification, $0) }
        guard length > 0 else { return "" }
        var bytes = [CChar](repeating: 0, count: Int(length) + 1)
        _ = withVaList([argument]) { vsnprintf(&bytes, bytes.count, specification, $0) }
        return String(decoding: bytes.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
