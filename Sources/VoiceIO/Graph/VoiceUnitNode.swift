/// The voice unit as a graph's sink (Apple's I/O node): what reaches its one input bus (mono Float32 at the
/// device rate) joins the unit's other audio: ducked per the unit's ducking, played, and part of the echo
/// reference, so it is cancelled from the microphone like the far end.
///
/// The graph installs itself on the unit at `initialize`, which must happen while the unit is stopped; `start`
/// starts the unit if it is not running, and `stop` stops it again if the graph started it.
public final class VoiceUnitNode: AudioNode, @unchecked Sendable {
    public let unit: VoiceProcessingIO
    /// What the input bus takes: mono Float32 at the device rate.
    public let format: StreamFormat
    private var startedUnit = false

    public init(unit: VoiceProcessingIO, name: String = "voice unit") throws(AudioGraphError) {
        self.unit = unit
        do {
            format = try StreamFormat(sampleRate: unit.deviceConfiguration.sampleRate)
        } catch {
            throw .invalidParameter("\(error)")
        }
        super.init(name: name, outputFormat: nil, inputBusCount: 1)
    }

    override func inputFormat(bus: Int) -> StreamFormat { format }

    func attach(_ graph: AudioGraph) throws(AudioGraphError) {
        guard !unit.isRunning else { throw .invalidParameter("initialize the graph before starting \(name)") }
        unit.setOtherAudioRenderer { [weak graph] frames in graph?.render(into: frames, adding: true) }
    }

    func startUnit() throws(AudioGraphError) {
        guard !unit.isRunning else { return }
        do { try unit.start() } catch { throw .unit(error) }
        startedUnit = true
    }

    override func didStop() {
        guard startedUnit else { return }
        unit.stop()
        startedUnit = false
    }
}
