import CALSA
import Glibc

/// One PCM from alsa-lib's device hints (`snd_device_name_hint`).
public struct ALSAPCMDescription: Sendable, Hashable {
    /// The name to open, e.g. `default` or `plughw:CARD=PCH,DEV=0`.
    public let name: String
    /// The hint's description, lines joined with " — " (empty when the PCM has none).
    public let description: String
    public let canPlay: Bool
    public let canCapture: Bool
}

/// Lists the PCMs the global ALSA configuration (and the cards present) offer. Not real-time safe.
public enum ALSADeviceList {
    /// Every PCM hint, in alsa-lib's order. A hint without IOID works both ways.
    public static func pcms() throws(ALSAError) -> [ALSAPCMDescription] {
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        try alsaCheck(snd_device_name_hint(-1, "pcm", &hints), "list PCM device hints", deviceName: "pcm")
        guard let hints else { return [] }
        defer { snd_device_name_free_hint(hints) }
        var found: [ALSAPCMDescription] = []
        var index = 0
        while let hint = hints[index] {
            index += 1
            guard let name = hintValue(hint, "NAME") else { continue }
            let description = hintValue(hint, "DESC")?.split(separator: "\n").joined(separator: " — ") ?? ""
            let direction = hintValue(hint, "IOID")
            found.append(ALSAPCMDescription(name: name, description: description,
                                            canPlay: direction != "Input", canCapture: direction != "Output"))
        }
        return found
    }

    private static func hintValue(_ hint: UnsafeMutableRawPointer, _ key: String) -> String? {
        guard let value = snd_device_name_get_hint(hint, key) else { return nil }
        defer { free(value) }
        return String(cString: value)
    }
}
