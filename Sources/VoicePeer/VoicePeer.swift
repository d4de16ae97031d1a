import ArgumentParser

@main
struct VoicePeer: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voicepeer",
        abstract: "Full-duplex voice engine: echo cancellation, gain control and talk-back calls over RTP/Opus.",
        subcommands: [ProcessCommand.self, SimulateCommand.self, CallCommand.self, CompareCommand.self,
                      DevicesCommand.self]
    )
}
