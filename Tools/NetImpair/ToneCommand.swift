import ArgumentParser
#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// `netimpair tone`: how much of a recording is the flood's tone: the share of 20 ms windows, loud enough to
/// matter, whose power sits mostly in one 50 Hz band around the tone (Goertzel). Speech almost never does.
struct ToneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "tone", abstract: "Count windows of a recording dominated by a tone.")

    @Option(help: "A WAV file.") var file: String
    @Option(help: "The tone's frequency.") var hertz = ForeignPackets.toneHertz
    @Option(name: .customLong("min-dbfs"), help: "Ignore windows quieter than this.") var minimumDBFS = -40.0
    @Option(help: "A window is the tone's when at least this share of its power is at the tone.") var share = 0.5
    @Flag(help: "Print the counts as one JSON object (toneWindows, loudWindows, maximumShare).") var json = false

    struct Counts: Codable {
        var toneWindows: Int
        var loudWindows: Int
        var maximumShare: Double
    }

    func run() throws {
        let reader = try AudioFileReader(path: file)
        let rate = reader.format.sampleRate
        let samples = try reader.readAllMono()
        let windowFrames = rate / 50
        var loud = 0
        var tonal = 0
        var strongest = 0.0
        for start in stride(from: 0, to: samples.count - windowFrames + 1, by: windowFrames) {
            let window = samples[start..<(start + windowFrames)]
            let energy = window.reduce(0.0) { $0 + Double($1) * Double($1) }
            guard 10 * log10(max(energy / Double(windowFrames), 1e-20)) >= minimumDBFS else { continue }
            loud += 1
            let toneShare = Self.goertzelPower(window, hertz: hertz, rate: rate) / energy
            strongest = max(strongest, toneShare)
            if toneShare >= share { tonal += 1 }
        }
        if json {
            print(try ReportJSON.encode(Counts(toneWindows: tonal, loudWindows: loud, maximumShare: strongest)), terminator: "")
            return
        }
        print(String(cFormat: "tone: %@ tone_windows=%d loud_windows=%d max_share=%.2f (%.0f Hz, 20 ms windows)",
                     file, tonal, loud, strongest, hertz))
    }

    /// Power at `hertz` in `window`, scaled so that a pure sine there gives the window's energy.
    static func goertzelPower(_ window: ArraySlice<Float>, hertz: Double, rate: Int) -> Double {
        let coefficient = 2 * cos(2 * Double.pi * hertz / Double(rate))
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in window {
            let current = Double(sample) + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        let power = previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
        return 2 * power / Double(window.count)
    }
}
