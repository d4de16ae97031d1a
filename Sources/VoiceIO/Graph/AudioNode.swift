/// One node of an `AudioGraph`: some input buses, at most one output bus, all Float32 interleaved.
///
/// Subclasses (in this module) render one slice at a time into their own output buffer, which the graph sizes at
/// `initialize`. A node belongs to one graph. Rendering runs on the real-time thread; everything else does not.
public class AudioNode: @unchecked Sendable {
    /// The name errors and summaries use.
    public let name: String
    /// What the output bus carries; nil for a sink (the graph's end).
    public let outputFormat: StreamFormat?
    /// Input buses.
    public let inputBusCount: Int
    /// The graph this node joined (set on the first connection); guards against sharing a node.
    weak var graph: AudioGraph?
    /// Interleaved output samples, `maximumFrameCount * channelCount`. Written by `render` only.
    private(set) var output = UnsafeMutableBufferPointer<Float>(start: nil, count: 0)

    init(name: String, outputFormat: StreamFormat?, inputBusCount: Int) {
        self.name = name
        self.outputFormat = outputFormat
        self.inputBusCount = inputBusCount
    }

    deinit { output.deallocate() }

    /// The format input `bus` takes (`bus` is in range).
    func inputFormat(bus: Int) -> StreamFormat { preconditionFailure("\(name) has no inputs") }

    /// Allocates for slices of up to `maximumFrameCount` frames. Not real-time safe.
    func prepare(maximumFrameCount: Int) throws(AudioGraphError) {
        guard let outputFormat else { return }
        let samples = maximumFrameCount * outputFormat.channelCount
        guard output.count < samples else { return }
        output.deallocate()
        output = .allocate(capacity: samples)
        output.initialize(repeating: 0)
    }

    /// Called when the graph starts running with this node, and when it stops (or drops the node). Not real-time
    /// safe.
    func didStart() throws(AudioGraphError) {}
    func didStop() {}

    /// Renders `frameCount` frames into `output`. `inputs[bus]` points at the source's interleaved samples in the
    /// bus's format, or is nil (silence). `sampleTime` counts frames since the graph started. Real-time safe.
    func render(inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, frameCount: Int, sampleTime: Int) {}
}

/// The end of a graph rendered by the caller (offline use, tests): `AudioGraph.render(frameCount:into:)` copies
/// what reaches its one input bus.
public final class GraphOutputNode: AudioNode, @unchecked Sendable {
    public let format: StreamFormat

    public init(format: StreamFormat, name: String = "output") {
        self.format = format
        super.init(name: name, outputFormat: nil, inputBusCount: 1)
    }

    override func inputFormat(bus: Int) -> StreamFormat { format }
}
