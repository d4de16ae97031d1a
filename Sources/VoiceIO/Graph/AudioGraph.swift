import Synchronization

//  A graph of audio nodes around the voice unit (after Apple's AUGraph):
//
//   FilePlayerNode ─┐ bus 0
//   ToneNode ───────┼──► MixerNode ──► VoiceUnitNode = the unit's other-audio input ─► ducked, mixed, played,
//   RenderCallback ─┘ bus 2           (or GraphOutputNode, rendered by the caller)     and the echo reference
//
//  connect → initialize (validates, allocates, builds a render plan) → start → connect/disconnect → update
//  (a new plan, adopted at the next slice) → stop. One render thread pulls: each slice renders the plan's nodes
//  sources first, each into its own buffer, and hands the sink's input on.

/// A graph of `AudioNode`s ending in one sink. Build and change it from one controlling thread; it renders on
/// the real-time thread (the unit's I/O cycle, or the caller of `render`).
public final class AudioGraph: @unchecked Sendable {
    /// The most frames one slice renders; longer requests are split.
    public let maximumFrameCount: Int
    private struct Connection {
        let source: AudioNode
        let destination: AudioNode
        let bus: Int
    }
    private var connections: [Connection] = []
    private var isInitialized = false
    private var startedNodes: [AudioNode] = []
    private let exchange = PlanExchange()
    private let running = Atomic<Bool>(false)
    /// Real-time side: frames rendered since `start`.
    private var sampleTime = 0

    /// `maximumFrameCount`: the largest slice, e.g. the device period. Not real-time safe.
    public init(maximumFrameCount: Int) {
        precondition(maximumFrameCount > 0, "a slice holds at least one frame")
        self.maximumFrameCount = maximumFrameCount
    }

    deinit { stop() }

    public var isRunning: Bool { running.load(ordering: .acquiring) }

    // MARK: Building (controlling thread)

    /// Connects `source`'s output to `destination`'s input `bus`. Checked at `initialize`/`update`, which also
    /// apply it. Not real-time safe.
    public func connect(_ source: AudioNode, to destination: AudioNode, bus: Int = 0) throws(AudioGraphError) {
        for node in [source, destination] {
            if let owner = node.graph, owner !== self { throw .nodeInOtherGraph(node: node.name) }
        }
        guard (0..<destination.inputBusCount).contains(bus) else {
            throw .busOutOfRange(node: destination.name, bus: bus, busCount: destination.inputBusCount)
        }
        source.graph = self
        destination.graph = self
        connections.append(Connection(source: source, destination: destination, bus: bus))
    }

    /// Removes whatever feeds `destination`'s input `bus` (applied at the next `update`). Not real-time safe.
    public func disconnect(_ destination: AudioNode, bus: Int = 0) {
        connections.removeAll { $0.destination === destination && $0.bus == bus }
    }

    /// Checks the connections and formats, allocates every node's buffers and installs the first render plan.
    /// Not real-time safe.
    public func initialize() throws(AudioGraphError) {
        let (plan, sink, _) = try buildPlan()
        if let unitNode = sink as? VoiceUnitNode { try unitNode.attach(self) }
        exchange.publish(plan)
        isInitialized = true
    }

    /// Applies connections changed since `initialize` or the last `update`: while running, the new plan takes
    /// over at the next slice, atomically; nodes that joined start and nodes that left stop. Not real-time safe.
    public func update() throws(AudioGraphError) {
        guard isInitialized else { throw .notInitialized }
        let (plan, _, order) = try buildPlan()
        if isRunning {
            for node in order where !startedNodes.contains(where: { $0 === node }) { try node.didStart() }
        }
        exchange.publish(plan)
        if isRunning {
            for node in startedNodes where !order.contains(where: { $0 === node }) { node.didStop() }
            startedNodes = order
        }
    }

    /// Starts the nodes (file players begin streaming) and rendering; with a `VoiceUnitNode`, starts the unit if
    /// it is not running. Not real-time safe.
    public func start() throws(AudioGraphError) {
        guard isInitialized else { throw .notInitialized }
        guard !isRunning else { return }
        let (plan, sink, order) = try buildPlan()
        exchange.publish(plan)
        for node in order { try node.didStart() }
        startedNodes = order
        sampleTime = 0
        running.store(true, ordering: .releasing)
        if let unitNode = sink as? VoiceUnitNode { try unitNode.startUnit() }
    }

    /// Stops the unit (when the sink is a `VoiceUnitNode`), then rendering and the nodes. For a graph rendered
    /// with `render`, call it when no `render` call is under way. Not real-time safe.
    public func stop() {
        guard isRunning else { return }
        for node in startedNodes where node is VoiceUnitNode { node.didStop() }
        running.store(false, ordering: .releasing)
        for node in startedNodes where !(node is VoiceUnitNode) { node.didStop() }
        startedNodes = []
        exchange.reclaim()
    }

    // MARK: Rendering (real-time thread)

    /// Renders `frames.count / channelCount` frames of the sink's input into `frames` (interleaved in the sink's
    /// format); silence while stopped. Real-time safe; one thread at a time.
    public func render(into frames: UnsafeMutableBufferPointer<Float>) {
        render(into: frames, adding: false)
    }

    /// Like `render`, but adds into `frames`. Real-time safe.
    func render(into frames: UnsafeMutableBufferPointer<Float>, adding: Bool) {
        guard isRunning else {
            if !adding { frames.update(repeating: 0) }
            return
        }
        guard let plan = exchange.adoptPlan() else {
            if !adding { frames.update(repeating: 0) }
            return
        }
        let channels = plan.sinkFormat.channelCount
        var done = 0
        while frames.count - done >= channels {
            let frameCount = min((frames.count - done) / channels, maximumFrameCount)
            let sampleCount = frameCount * channels
            plan.render(frameCount: frameCount, sampleTime: sampleTime)
            sampleTime += frameCount
            let destination = frames.baseAddress! + done
            if let source = plan.sinkInput {
                if adding {
                    for index in 0..<sampleCount { destination[index] += source[index] }
                } else {
                    destination.update(from: source, count: sampleCount)
                }
            } else if !adding {
                destination.update(repeating: 0, count: sampleCount)
            }
            done += sampleCount
        }
    }

    // MARK: Validation

    private func buildPlan() throws(AudioGraphError) -> (RenderPlan, AudioNode, [AudioNode]) {
        var nodes: [AudioNode] = []
        for connection in connections {
            for node in [connection.source, connection.destination] where !nodes.contains(where: { $0 === node }) {
                nodes.append(node)
            }
        }
        for (index, connection) in connections.enumerated() {
            let source = connection.source, destination = connection.destination
            guard let sourceFormat = source.outputFormat else { throw .nodeHasNoOutput(node: source.name) }
            if connections[..<index].contains(where: { $0.destination === destination && $0.bus == connection.bus }) {
                throw .busConnectedTwice(node: destination.name, bus: connection.bus)
            }
            if connections[..<index].contains(where: { $0.source === source }) {
                throw .nodeConnectedTwice(node: source.name)
            }
            let destinationFormat = destination.inputFormat(bus: connection.bus)
            guard sourceFormat == destinationFormat else {
                throw .formatMismatch(source: source.name, destination: destination.name, bus: connection.bus,
                                      sourceFormat: sourceFormat, destinationFormat: destinationFormat)
            }
        }
        let sinks = nodes.filter { $0.outputFormat == nil }
        guard sinks.count == 1, let sink = sinks.first else { throw .sinkCount(sinks.count) }
        // Depth-first from every node: a node met again while still on the path closes a cycle.
        var order: [AudioNode] = []
        var path: [AudioNode] = []
        func visit(_ node: AudioNode) throws(AudioGraphError) {
            if let start = path.firstIndex(where: { $0 === node }) {
                throw .cycle(nodes: (path[start...] + [node]).reversed().map(\.name))
            }
            guard !order.contains(where: { $0 === node }) else { return }
            path.append(node)
            for connection in connections where connection.destination === node { try visit(connection.source) }
            path.removeLast()
            order.append(node)
        }
        for node in nodes { try visit(node) }
        // Only what reaches the sink renders.
        var reachable: [AudioNode] = [sink]
        var index = 0
        while index < reachable.count {
            for connection in connections where connection.destination === reachable[index] {
                reachable.append(connection.source)
            }
            index += 1
        }
        let rendered = order.filter { node in node !== sink && reachable.contains { $0 === node } }
        for node in rendered { try node.prepare(maximumFrameCount: maximumFrameCount) }
        let plan = RenderPlan(order: rendered, sink: sink) { node, bus in
            connections.first { $0.destination === node && $0.bus == bus }?.source
        }
        return (plan, sink, rendered + [sink])
    }
}
