import CALSA

/// A failed alsa-lib call: what was being done, on which PCM, and alsa-lib's own reason (`snd_strerror`).
///
/// `code` is the negative errno alsa-lib returned; compare it with the named codes below in a `catch`.
public struct ALSAError: Error, Equatable, CustomStringConvertible {
    /// What was being done, e.g. "open capture PCM" or "set the sample format".
    public let operation: String
    /// The PCM name as given by the caller (`default`, `hw:0,0`, a name from an ALSA config).
    public let deviceName: String
    /// alsa-lib's negative error code.
    public let code: Int32

    public init(_ operation: String, deviceName: String, code: Int32) {
        self.operation = operation
        self.deviceName = deviceName
        self.code = code
    }

    /// alsa-lib's message for `code`.
    public var reason: String { String(cString: snd_strerror(code)) }

    /// One line naming the device and alsa-lib's reason.
    public var description: String { "alsa:\(deviceName): cannot \(operation): \(reason)" }

    /// The PCM is already in use by someone else (`-EBUSY`).
    public var isBusy: Bool { code == -16 }
    /// No PCM of that name exists (`-ENOENT`).
    public var isMissing: Bool { code == -2 }
}

/// Calls an alsa-lib function returning a negative error code on failure; throws `ALSAError` then.
@inline(__always)
func alsaCheck(_ result: Int32, _ operation: @autoclosure () -> String, deviceName: String) throws(ALSAError) {
    if result < 0 { throw ALSAError(operation(), deviceName: deviceName, code: result) }
}

extension ALSAError {
    /// Stops alsa-lib printing its own diagnostics to stderr for the rest of the process (its errors still come
    /// back as `ALSAError`s). For command-line tools that promise one-line errors. Not real-time safe.
    public static func silenceLibraryMessages() { voiceio_alsa_silence_library_messages() }
}
