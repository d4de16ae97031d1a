/// Why a graph could not be built, initialized or started. Each description is one line naming the nodes.
public enum AudioGraphError: Error, CustomStringConvertible {
    /// A connection names a bus the node does not have.
    case busOutOfRange(node: String, bus: Int, busCount: Int)
    /// A source's output format differs from what the destination bus takes.
    case formatMismatch(source: String, destination: String, bus: Int, sourceFormat: StreamFormat,
                        destinationFormat: StreamFormat)
    /// The connections loop back on themselves through these nodes.
    case cycle(nodes: [String])
    /// A node's output feeds two input buses (a graph has no fan-out).
    case nodeConnectedTwice(node: String)
    /// Two sources feed the same input bus.
    case busConnectedTwice(node: String, bus: Int)
    /// A node without an output (a sink) was used as a source.
    case nodeHasNoOutput(node: String)
    /// The graph needs exactly one sink (a `VoiceUnitNode` or a `GraphOutputNode`) with its input connected.
    case sinkCount(Int)
    /// A node already belongs to another graph.
    case nodeInOtherGraph(node: String)
    /// `start` or `update` before `initialize`.
    case notInitialized
    case invalidParameter(String)
    case file(AudioFileError)
    case resampler(SpeexError)
    case unit(VoiceProcessingError)
    case thread(ThreadStartError)

    public var description: String {
        switch self {
        case .busOutOfRange(let node, let bus, let count):
            "\(node) has no bus \(bus) (it has \(count))"
        case .formatMismatch(let source, let destination, let bus, let from, let to):
            "\(source) gives \(from) but \(destination) bus \(bus) takes \(to)"
        case .cycle(let nodes): "the connections loop through \(nodes.joined(separator: " -> "))"
        case .nodeConnectedTwice(let node): "\(node)'s output is connected twice"
        case .busConnectedTwice(let node, let bus): "\(node) bus \(bus) has two sources"
        case .nodeHasNoOutput(let node): "\(node) has no output to connect"
        case .sinkCount(let count): "the graph needs exactly one connected output node, it has \(count)"
        case .nodeInOtherGraph(let node): "\(node) already belongs to another graph"
        case .notInitialized: "the graph is not initialized"
        case .invalidParameter(let reason): reason
        case .file(let error): "\(error)"
        case .resampler(let error): "\(error)"
        case .unit(let error): "\(error)"
        case .thread(let error): "\(error)"
        }
    }
}
