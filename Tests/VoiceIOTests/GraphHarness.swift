import Glibc
import VoiceIO
import VoiceIOSimulation

/// A unit on a simulated room (virtual clock) with a graph feeding its other audio: a mixer whose buses play the
/// nodes `buses` makes for the device's format, in order.
final class GraphHarness {
    let harness: UnitHarness
    let graph: AudioGraph
    let mixer: MixerNode

    init(room: SimulatedRoomConfiguration, recordSeconds: Double = 0,
         buses: (StreamFormat) throws -> [AudioNode]) throws {
        harness = try UnitHarness(room: room, recordSeconds: recordSeconds)
        harness.unit.stop()
        let format = try StreamFormat(sampleRate: harness.unit.deviceConfiguration.sampleRate)
        let nodes = try buses(format)
        mixer = try MixerNode(inputBusCount: nodes.count, busFormat: format, outputFormat: format)
        graph = AudioGraph(maximumFrameCount: harness.unit.deviceConfiguration.periodFrames)
        for (bus, node) in nodes.enumerated() { try graph.connect(node, to: mixer, bus: bus) }
        try graph.connect(mixer, to: try VoiceUnitNode(unit: harness.unit))
        try graph.initialize()
        try graph.start()
    }

    /// Runs the room period by period, pausing so file players' streaming threads keep up, and reads the processed
    /// voice after each period (`harness.output`).
    func run(periods: Int) throws {
        for _ in 0..<periods {
            try harness.room.run(periods: 1)
            usleep(500)
            harness.collect()
        }
    }
}
