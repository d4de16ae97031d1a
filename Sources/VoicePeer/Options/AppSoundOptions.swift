import ArgumentParser

/// `--play FILE[@GAIN_DB]` (repeatable) and `--mute`, shared by `simulate` and `call`.
struct AppSoundOptions: ParsableArguments {
    @Option(name: .customLong("play"),
            help: ArgumentHelp("Play FILE looped on its own mixer bus at GAIN_DB (default 0); repeatable. It is ducked with the other audio and cancelled from the microphone.",
                               valueName: "FILE[@GAIN_DB]"))
    var plays: [PlayedFile] = []
    @Flag(help: "Mute the uplink: send silence and report speech while muted.")
    var mute = false

    func validate() throws {
        for played in plays {
            try FlagRange(flag: "--play \(played.path) gain (dB)", range: -60...12).check(played.gainDB)
        }
    }
}

/// One `--play` argument: a file and its bus gain in dB.
struct PlayedFile: ExpressibleByArgument {
    let path: String
    let gainDB: Double

    init?(argument: String) {
        // The last '@' splits off the gain, so paths holding '@' still work with an explicit gain.
        if let at = argument.lastIndex(of: "@"), let gain = Double(argument[argument.index(after: at)...]) {
            path = String(argument[..<at])
            gainDB = gain
        } else {
            path = argument
            gainDB = 0
        }
        guard !path.isEmpty else { return nil }
    }
}
