import ArgumentParser
import VoiceCall
import VoiceIO

/// The stream flags of `voicepeer call` and `voicepeer sdp`: the voice rate and the Opus encoder's bitrate, frame
/// duration, FEC and DTX, validated against what the unit and Opus accept.
struct StreamOptions: ParsableArguments {
    @Option(name: .customLong("voice-rate"), help: "Voice rate in Hz (8000, 11025, 12000, 16000, 24000, 48000).")
    var voiceRate = 16000
    @Option(help: "Opus bitrate in bit/s.")
    var bitrate = 24000
    @Option(name: .customLong("frame-ms"), help: "Opus frame duration in ms (10, 20, 40, 60).")
    var frameMilliseconds = 20
    @Flag(help: "Opus in-band forward error correction.")
    var fec = false
    @Flag(help: "Opus discontinuous transmission (send nothing during silence).")
    var dtx = false
    @Option(help: "Opus encoder complexity, 0-10 (default: the call's, 9).")
    var complexity: Int?

    func validate() throws {
        guard StreamFormat.voiceRates.contains(voiceRate) else {
            throw ValidationError("--voice-rate \(voiceRate) is not one of \(StreamFormat.voiceRates.map(String.init).joined(separator: ", "))")
        }
        guard OpusFormat.frameDurationsMilliseconds.contains(frameMilliseconds) else {
            throw ValidationError("--frame-ms must be one of 10, 20, 40, 60")
        }
        if let complexity, !(0...10).contains(complexity) { throw ValidationError("--complexity must be within 0-10") }
        guard OpusFormat.bitrateRange.contains(bitrate) else {
            throw ValidationError("--bitrate must be within \(OpusFormat.bitrateRange.lowerBound)–\(OpusFormat.bitrateRange.upperBound)")
        }
    }

    /// Sets the call's voice rate and Opus encoder settings from these flags.
    func apply(to configuration: inout CallConfiguration) {
        configuration.voiceRate = voiceRate
        configuration.frameDurationMilliseconds = frameMilliseconds
        configuration.bitsPerSecond = bitrate
        configuration.inbandFEC = fec
        configuration.dtx = dtx
        if let complexity { configuration.opusComplexity = complexity }
    }
}
