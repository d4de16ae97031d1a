import ArgumentParser

/// `--block-ms`: the processing block of `process` and `simulate`, 10 ms or a call's 5 (`voicepeer call` picks its own
/// from the frame length).
struct ProcessingBlockOptions: ParsableArguments {
    @Option(name: .customLong("block-ms"),
            help: "Processing block in ms: 10, or 5 as a call's unit runs (voicepeer call with 20 ms frames or shorter).")
    var blockMilliseconds = 10
}
