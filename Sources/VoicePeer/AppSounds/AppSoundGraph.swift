#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// The app sounds of `simulate` and `call` as an audio graph on the unit: one mixer bus per `--play` file
/// (looped, at its gain) and, for `call --ringtone`, a ring on the last bus until the far end first talks.
final class AppSoundGraph {
    /// Far-end level above which the far end counts as talking (the unit's own far-activity threshold), in dBFS.
    static let farVoiceThresholdDBFS: Float = -45
    let graph: AudioGraph
    let mixer: MixerNode
    private let players: [FilePlayerNode]
    private let labels: [String]
    private let ringBus: Int?
    private(set) var isRinging: Bool

    /// Builds and initializes the graph (the unit must be stopped); nil when there is nothing to play.
    init?(unit: VoiceProcessingIO, files: [PlayedFile], ringtone: Bool) throws {
        guard !files.isEmpty || ringtone else { return nil }
        let format = try StreamFormat(sampleRate: unit.deviceConfiguration.sampleRate)
        let busCount = files.count + (ringtone ? 1 : 0)
        mixer = try MixerNode(name: "app sounds", inputBusCount: busCount, busFormat: format, outputFormat: format)
        graph = AudioGraph(maximumFrameCount: unit.deviceConfiguration.periodFrames)
        var players: [FilePlayerNode] = []
        for (bus, file) in files.enumerated() {
            let player = try FilePlayerNode(path: file.path, format: format)
            try player.schedule(loops: true)
            try graph.connect(player, to: mixer, bus: bus)
            mixer.setVolume(decibels: Float(file.gainDB), bus: bus, rampMilliseconds: 0)
            players.append(player)
        }
        labels = files.map { String(cFormat: "%@ (gain %+.1f dB)", $0.path.split(separator: "/").last.map(String.init) ?? $0.path, $0.gainDB) }
            + (ringtone ? ["ringtone"] : [])
        if ringtone {
            try graph.connect(try ToneNode(name: "ringtone", format: format, pattern: .ringtone), to: mixer,
                              bus: files.count)
            ringBus = files.count
        } else {
            ringBus = nil
        }
        isRinging = ringtone
        self.players = players
        try graph.connect(mixer, to: try VoiceUnitNode(unit: unit))
        try graph.initialize()
    }

    /// Starts streaming and mixing (and the unit, if it is not running).
    func start() throws { try graph.start() }

    func stop() { graph.stop() }

    /// Fades the ring out (over 50 ms).
    func stopRinging() {
        guard let ringBus, isRinging else { return }
        mixer.setEnabled(false, bus: ringBus, rampMilliseconds: 50)
        isRinging = false
    }

    /// Waits until every file player has audio buffered ahead (for a room on the virtual clock).
    func waitForPlayers() {
        for player in players { player.waitUntilBuffered() }
    }

    /// One line per bus: its file (or the ring), gain, mean level into the mix, and streaming underruns.
    var summaryLines: [String] {
        labels.enumerated().map { bus, label in
            let underruns = bus < players.count && players[bus].underrunCount > 0
                ? ", \(players[bus].underrunCount) underruns" : ""
            return String(cFormat: "  bus %d %@: mean %.1f dBFS RMS into the mix%@", bus, label,
                          mixer.meanInputLevelDBFS(bus: bus), underruns)
        }
    }
}
