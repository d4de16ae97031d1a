/// Base64 (RFC 4648 §4, with padding) for SDES keys. Decoding is strict: only the alphabet, padding only at
/// the end, length a multiple of 4.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : UInt8(ascii: "="))
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func decode(_ text: Substring) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard !characters.isEmpty, characters.count % 4 == 0 else { return nil }
        var out = [UInt8]()
        for start in stride(from: 0, to: characters.count, by: 4) {
            var value = 0
            var padding = 0
            for (offset, character) in characters[start..<start + 4].enumerated() {
                if character == UInt8(ascii: "=") {
                    guard start + 4 == characters.count, offset >= 2 else { return nil }
                    padding += 1
                    continue
                }
                guard padding == 0, let digit = alphabet.firstIndex(of: character) else { return nil }
                value |= digit << (18 - 6 * offset)
            }
            for offset in 0..<(3 - padding) { out.append(UInt8((value >> (16 - 8 * offset)) & 0xff)) }
        }
        return out
    }
}
