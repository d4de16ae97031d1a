/// A duplex `AudioDevice` over libpipewire: a playback and a capture `pw_stream` of mono Float32 on one
/// connection, their process callbacks on the context's real-time data thread, joined by `PipeWireDuplexCycle`.
///
/// `open` connects to the server (so a missing or refusing server fails there, with PipeWire's reason) and
/// returns the requested rate (PipeWire converts if the graph runs another) with a period of the power of two
/// nearest the request, and the streams ask for a quantum of one period (`node.latency`). `start` creates both streams, named `nodeName` (playback)
/// and `nodeName`-capture, linked to the targets when given (`target.object`, looked up at `open`; a sink as
/// capture target means its monitor) or wherever the session manager links them (the default sink and source).
/// A server that dies, or a stream that fails, ends the cycle and is reported by `failure`; a suspended sink only
/// pauses the cycle, which resumes with it.
/// Life cycle and thread rules are those of `AudioDevice`; `timing` and `statistics` are safe from any thread.
public final class PipeWireDevice: AudioDevice, @unchecked Sendable {
    /// The server: a socket path or a name in the runtime directory; nil for `PIPEWIRE_REMOTE` or `pipewire-0`.
    public let server: String?
    /// The sink playback links to, or nil for the default sink.
    public let playbackTarget: String?
    /// The node capture links to (a source, or a sink whose monitor is captured), or nil for the default source.
    public let captureTarget: String?
    /// The playback stream's `node.name` (the capture stream's is this plus `-capture`).
    public let nodeName: String
    /// `SCHED_FIFO` priority the data thread takes at its first callback (libpipewire's client configuration
    /// does not load its real-time module), or nil to leave it as libpipewire made it.
    public let realTimePriority: Int32?
    private let isSingleTarget: Bool

    private var connection: PipeWireConnection?
    private var configuration: DeviceConfiguration?
    /// The targets as resolved at `open`: what playback links to, what capture links to and whether it is a sink.
    private var resolved: (playback: String?, capture: String?, captureIsSink: Bool) = (nil, nil, false)
    private var playback: PipeWireStream?
    private var capture: PipeWireStream?
    private var duplex: PipeWireDuplexCycle?
    private var counters = PipeWireDeviceCounters()

    /// Plays to `playbackTarget` and captures from `captureTarget` (by `node.name`; nil: the defaults).
    public init(server: String? = nil, playbackTarget: String?, captureTarget: String?, nodeName: String = "voiceio",
                realTimePriority: Int32? = 40) {
        self.server = server
        self.realTimePriority = realTimePriority
        self.playbackTarget = playbackTarget
        self.captureTarget = captureTarget
        self.nodeName = nodeName
        isSingleTarget = false
    }

    /// One node for both directions: a sink is played to and its monitor captured; a source is captured from
    /// while playback goes to the default sink. Nil: the default sink and source.
    public init(server: String? = nil, target: String? = nil, nodeName: String = "voiceio",
                realTimePriority: Int32? = 40) {
        self.server = server
        self.realTimePriority = realTimePriority
        playbackTarget = target
        captureTarget = target
        self.nodeName = nodeName
        isSingleTarget = true
    }

    public var name: String {
        switch (playbackTarget, captureTarget) {
        case (nil, nil): "pipewire"
        case (let playback?, let capture?) where playback == capture: "pipewire:\(playback)"
        default: "pipewire:\(playbackTarget ?? "")|\(captureTarget ?? "")"
        }
    }

    /// Connects to the server and waits for its answer; returns `requested` (PipeWire converts rate and format
    /// to it). Stops a running cycle first. Not real-time safe.
    public func open(requested: DeviceConfiguration) throws -> DeviceConfiguration {
        stop()
        connection = nil
        let newConnection = try PipeWireConnection(server: server, name: "voiceio-pipewire")
        try newConnection.withLock { () throws(PipeWireError) in try newConnection.roundTrip() }
        resolved = try resolveTargets(on: newConnection)
        connection = newConnection
        let period = Self.quantumFrames(near: requested.periodFrames)
        let given = DeviceConfiguration(sampleRate: requested.sampleRate, periodFrames: period, bufferFrames: period)
        configuration = given
        return given
    }

    /// The power of two nearest to `frames` (in ratio): PipeWire's graph runs power-of-two quanta by default
    /// (`clock.power-of-two-quantum`), so a 480-frame request (10 ms at 48 kHz) becomes 512.
    static func quantumFrames(near frames: Int) -> Int {
        let below = 1 << (Int.bitWidth - 1 - max(frames, 1).leadingZeroBitCount)
        return below == frames || Double(frames) / Double(below) < Double(2 * below) / Double(frames) ? below : 2 * below
    }

    /// Looks the targets up among the server's sinks and sources; a name that is not there is an error.
    private func resolveTargets(on connection: PipeWireConnection) throws(PipeWireError)
        -> (playback: String?, capture: String?, captureIsSink: Bool) {
        guard playbackTarget != nil || captureTarget != nil else { return (nil, nil, false) }
        let nodes = try PipeWireNodeList.nodes(on: connection)
        func find(_ name: String, _ kinds: [PipeWireNode.Kind]) throws(PipeWireError) -> PipeWireNode {
            guard let node = nodes.first(where: { $0.name == name && kinds.contains($0.kind) }) else {
                let wanted = kinds.map(\.rawValue).joined(separator: " or ")
                throw PipeWireError("find the \(wanted) \(name)", server: connection.serverName, code: 0,
                                    message: "no such node (voicepeer devices lists them)")
            }
            return node
        }
        let captureNode = try captureTarget.map { name throws(PipeWireError) in try find(name, [.source, .sink]) }
        let playback: String?
        if isSingleTarget, captureNode?.kind == .source {
            playback = nil
        } else {
            playback = try playbackTarget.map { name throws(PipeWireError) in try find(name, [.sink]).name }
        }
        return (playback, captureNode?.name, captureNode?.kind == .sink)
    }

    /// Creates and connects both streams; the cycle runs once per period from the first captured period on.
    /// Not real-time safe.
    public func start(_ cycle: @escaping DeviceIOCycle) throws {
        guard let connection, let configuration else {
            throw PipeWireError("start before open", server: PipeWireConnection.displayName(server: server),
                                code: -77)
        }
        stop()
        if let error = connection.coreError { throw error }
        counters = PipeWireDeviceCounters()
        let joined = PipeWireDuplexCycle(cycleFrames: configuration.periodFrames, sampleRate: configuration.sampleRate,
                                         cycle: cycle, counters: counters, realTimePriority: realTimePriority)
        let context = Unmanaged.passUnretained(joined).toOpaque()
        let properties = [
            "node.latency": "\(configuration.periodFrames)/\(configuration.sampleRate)",
            "node.rate": "1/\(configuration.sampleRate)",
        ]
        var playbackProperties = properties
        playbackProperties["node.name"] = nodeName
        playbackProperties["target.object"] = resolved.playback
        var captureProperties = properties
        captureProperties["node.name"] = "\(nodeName)-capture"
        captureProperties["target.object"] = resolved.capture
        captureProperties["stream.capture.sink"] = resolved.captureIsSink ? "true" : nil
        let newPlayback = try PipeWireStream(connection: connection, direction: .playback,
                                             properties: playbackProperties,
                                             process: PipeWireDuplexCycle.playbackProcess, processContext: context)
        let newCapture = try PipeWireStream(connection: connection, direction: .capture, properties: captureProperties,
                                            process: PipeWireDuplexCycle.captureProcess, processContext: context)
        newCapture.reconnectsOnResume = resolved.captureIsSink || resolved.capture == nil
        joined.playbackStream = newPlayback.stream
        joined.captureStream = newCapture.stream
        duplex = joined
        playback = newPlayback
        capture = newCapture
        do {
            try newPlayback.connect(sampleRate: configuration.sampleRate)
            try newCapture.connect(sampleRate: configuration.sampleRate)
        } catch {
            stop()
            throw error
        }
    }

    /// Disconnects and destroys both streams; the cycle is not called once this returns. Not real-time safe.
    public func stop() {
        playback?.disconnect()
        capture?.disconnect()
        playback = nil
        capture = nil
        duplex = nil
    }

    public var timing: DeviceTiming { counters.timing }

    /// Why the cycle ended by itself: the server died or refused the connection, or a stream failed; carries
    /// PipeWire's message. Nil while running and after a normal `stop`. Safe from any thread.
    public var failure: (any Error)? { pipeWireFailure }

    /// `failure` with its type.
    public var pipeWireFailure: PipeWireError? {
        guard playback != nil else { return nil }
        return connection?.coreError ?? playback?.failure ?? capture?.failure
    }

    /// Counts kept by the streams since the last `start`. Safe from any thread.
    public var statistics: PipeWireDeviceStatistics {
        PipeWireDeviceStatistics(
            cycleCount: counters.cycleCount.load(ordering: .relaxed),
            capturedFrameCount: counters.capturedFrameCount.load(ordering: .relaxed),
            droppedCaptureFrameCount: counters.droppedCaptureFrameCount.load(ordering: .relaxed),
            underrunCount: counters.underrunCount.load(ordering: .relaxed),
            ioThreadCPUNanoseconds: counters.ioThreadCPUNanoseconds.load(ordering: .relaxed),
            captureRelinkCount: capture?.relinkCount ?? 0)
    }

    deinit { stop() }
}

/// What a `PipeWireDevice`'s streams counted since its last start.
public struct PipeWireDeviceStatistics: Sendable, Hashable {
    /// Calls of the I/O cycle.
    public var cycleCount: Int
    /// Frames the capture stream delivered (and the cycle consumed or will).
    public var capturedFrameCount: Int
    /// Captured frames dropped because playback did not keep up (or the ring was full).
    public var droppedCaptureFrameCount: Int
    /// Playback callbacks that got less than they asked for (silence played) after cycles began.
    public var underrunCount: Int
    /// CPU time of the real-time data thread since its first playback callback, in nanoseconds.
    public var ioThreadCPUNanoseconds: Int
    /// Times the capture stream was relinked after its node resumed from a suspend.
    public var captureRelinkCount: Int
}
