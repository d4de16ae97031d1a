import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// `voicepeer process`: offline echo cancellation of a recorded microphone against the loudspeaker signal.
struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Cancel the echo of FAR in MIC (both at the device rate, same time base) and write the voice.")

    @Option(name: .long, help: "Microphone recording at the device rate.")
    var mic: String
    @Option(name: .long, help: "Loudspeaker signal, same rate and time base as the microphone.")
    var far: String
    @Option(name: .long, help: "Processed voice to write (WAV at the voice rate).")
    var out: String
    @Option(name: .customLong("voice-rate"), help: "Voice rate in Hz: 8000, 11025, 12000, 16000, 24000 or 48000.")
    var voiceRate = 16000
    @Flag(name: .customLong("no-agc"), help: "Turn automatic gain control off.")
    var noAGC = false
    @Flag(name: .customLong("no-ns"), help: "Turn noise suppression off (residual echo suppression stays).")
    var noNS = false
    @Flag(name: .long, help: "Bypass voice processing: rate conversion only.")
    var bypass = false
    @Option(name: .long, help: "Write run statistics as JSON to this file.")
    var stats: String?
    @Option(name: .customLong("reference-lead-ms"),
            help: "Take the echo reference this far ahead of FAR, in ms: the device's playback delay, to replay a live run (simulate's recordings: its report's deviceReportedDelayMilliseconds). (default: 0)")
    var referenceLeadMilliseconds = 0.0
    @OptionGroup var block: ProcessingBlockOptions

    /// Processed voice written to the file at a time, in seconds.
    static let writeSeconds = 0.1

    func run() throws {
        try CommandFailure.reporting {
            let voiceFormat = try StreamFormat.voice(sampleRate: voiceRate)
            let micReader = try AudioFileReader(path: mic)
            let farReader = try AudioFileReader(path: far)
            guard micReader.format.sampleRate == farReader.format.sampleRate else {
                throw CommandFailure("\(mic) is \(micReader.format.sampleRate) Hz but \(far) is \(farReader.format.sampleRate) Hz: both must have the device rate")
            }
            var settings = EchoPipelineSettings()
            settings.isNoiseSuppressionEnabled = !noNS
            guard referenceLeadMilliseconds >= 0, referenceLeadMilliseconds <= 1000 else {
                throw CommandFailure("--reference-lead-ms \(referenceLeadMilliseconds) is outside 0-1000 ms")
            }
            let leadFrames = Int((referenceLeadMilliseconds * Double(micReader.format.sampleRate) / 1000).rounded())
            let processor = try OfflineVoiceProcessor(deviceRate: micReader.format.sampleRate,
                                                      voiceRate: voiceFormat.sampleRate, settings: settings,
                                                      referenceLeadFrames: leadFrames,
                                                      processingBlockMilliseconds: block.blockMilliseconds)
            processor.bypass = bypass
            processor.enableAGC = !noAGC
            // Created first and written as the voice is produced, in pieces of `writeSeconds` (its header valid after
            // every write): a run killed at any moment leaves a playable file holding what was processed up to its
            // last piece. (Written per 10 ms period, the header rewrites made 15,700 system calls on 26 s of audio,
            // 10-20 ms of system time: 3-6 % of the run's CPU.)
            let writer = try AudioFileWriter(path: out, format: voiceFormat,
                                             pieceFrames: Int(Self.writeSeconds * Double(voiceFormat.sampleRate)))
            let microphone = try micReader.readAllMono()
            let loudspeaker = try farReader.readAllMono()
            let cpuStart = clock()
            try processor.process(microphone: microphone, loudspeaker: loudspeaker) { (frames) throws(AudioFileError) in
                try writer.write(frames)
            }
            let cpuSeconds = Double(clock() - cpuStart) / Double(CLOCKS_PER_SEC)
            writer.close()
            if let stats {
                let report = OfflineProcessingReport(processor: processor, frames: writer.framesWritten,
                                                     isNoiseSuppressionEnabled: !noNS, cpuSeconds: cpuSeconds)
                try TextFile.write(try ReportJSON.encode(report), to: stats)
            }
        }
    }
}
