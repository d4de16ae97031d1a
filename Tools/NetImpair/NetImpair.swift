import ArgumentParser

/// `netimpair`: the network side of the soak and flood scripts (scripts/soak, scripts/flood), on 127.0.0.1 only.
/// A relay between two call peers that impairs what it forwards (and may inject strangers' packets from the
/// trusted address), a flooder that sends strangers' datagrams at a peer, and a detector for the flood's tone.
@main
struct NetImpair: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "netimpair",
        abstract: "Impairment relay, packet flooder and tone detector for call soak and flood tests (127.0.0.1 only).",
        subcommands: [RelayCommand.self, FloodCommand.self, ToneCommand.self])
}
