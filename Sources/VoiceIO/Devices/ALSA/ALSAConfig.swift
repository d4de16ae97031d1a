import CALSA

/// An ALSA configuration tree parsed from a file, owned once (`snd_config_t`).
///
/// PCMs opened with it are looked up in this tree only (`snd_pcm_open_lconf`), so a test or a tool can define its
/// own PCMs without touching the process-wide configuration or `ALSA_CONFIG_PATH`. Not real-time safe.
public final class ALSAConfig: @unchecked Sendable {
    let handle: OpaquePointer
    /// The file the tree was read from.
    public let path: String

    /// Parses the ALSA configuration file at `path`.
    public init(contentsOf path: String) throws(ALSAError) {
        self.path = path
        var top: OpaquePointer?
        try alsaCheck(snd_config_top(&top), "create a configuration tree", deviceName: path)
        guard let top else { throw ALSAError("create a configuration tree", deviceName: path, code: -12) }
        var input: OpaquePointer?
        let openResult = snd_input_stdio_open(&input, path, "r")
        guard openResult >= 0, let input else {
            snd_config_delete(top)
            throw ALSAError("read configuration file \(path)", deviceName: path, code: openResult)
        }
        let loadResult = snd_config_load(top, input)
        snd_input_close(input)
        guard loadResult >= 0 else {
            snd_config_delete(top)
            throw ALSAError("parse configuration file \(path)", deviceName: path, code: loadResult)
        }
        handle = top
    }

    deinit { snd_config_delete(handle) }
}
