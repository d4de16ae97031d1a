import CPipeWire
import Glibc
import Synchronization

/// One `pw_stream` of mono Float32 frames, playback or capture, on a `PipeWireConnection`.
///
/// `process` is called on the context's real-time data thread (`PW_STREAM_FLAG_RT_PROCESS`) with `processContext`;
/// it must be real-time safe. State changes arrive on the connection's loop thread; an error state is kept in
/// `failure`. Created, connected and destroyed with the loop lock taken here; not real-time safe otherwise.
final class PipeWireStream: @unchecked Sendable {
    enum Direction {
        case playback, capture
        var label: String { self == .playback ? "playback" : "capture" }
    }

    let connection: PipeWireConnection
    let direction: Direction
    let stream: OpaquePointer
    private let hook: UnsafeMutablePointer<spa_hook>
    private let events: UnsafeMutablePointer<pw_stream_events>
    private let stateHook: UnsafeMutablePointer<spa_hook>
    private let streamError = Mutex<PipeWireError?>(nil)
    /// Signalled on a resume; runs `reconnect` at the loop's next iteration.
    private var reconnectEvent: UnsafeMutablePointer<spa_source>?
    /// Loop-thread state: the stream has streamed since it was (re)connected, and at which rate it connects.
    private var hasStreamed = false
    private var connectedRate = 0
    private let relinks = Atomic<Int>(0)

    /// Whether to relink the stream when it streams again after a pause (a suspended node resumed): a capture
    /// stream linked to a sink's monitor across a suspend keeps getting silence in PipeWire 0.3.65 until relinked.
    /// Set before `connect`.
    var reconnectsOnResume = false

    /// Makes the stream (not yet connected). `properties` are set on its node: name, latency, target, role.
    init(connection: PipeWireConnection, direction: Direction, properties: [String: String],
         process: @convention(c) (UnsafeMutableRawPointer?) -> Void,
         processContext: UnsafeMutableRawPointer) throws(PipeWireError) {
        self.connection = connection
        self.direction = direction
        hook = .allocate(capacity: 1)
        hook.initialize(to: spa_hook())
        events = .allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.process = process
        let nodeProperties = voiceio_pw_properties_new()
        pw_properties_set(nodeProperties, PW_KEY_MEDIA_TYPE, "Audio")
        pw_properties_set(nodeProperties, PW_KEY_MEDIA_CATEGORY, direction == .playback ? "Playback" : "Capture")
        pw_properties_set(nodeProperties, PW_KEY_MEDIA_ROLE, "Communication")
        for (key, value) in properties { pw_properties_set(nodeProperties, key, value) }
        let made: OpaquePointer? = connection.withLock {
            pw_stream_new(connection.core, "voiceio \(direction.label)", nodeProperties)
        }
        guard let made else {
            hook.deallocate()
            events.deallocate()
            throw PipeWireError("create the \(direction.label) stream", server: connection.serverName, code: -errno)
        }
        stream = made
        // Two listeners: `process` gets the cycle's context, the state listener gets this stream.
        let stateEvents = Self.stateEvents
        let stateHook = UnsafeMutablePointer<spa_hook>.allocate(capacity: 1)
        stateHook.initialize(to: spa_hook())
        self.stateHook = stateHook
        let context = Unmanaged.passUnretained(self).toOpaque()
        connection.withLock {
            pw_stream_add_listener(stream, hook, events, processContext)
            pw_stream_add_listener(stream, stateHook, stateEvents, context)
            reconnectEvent = voiceio_pw_loop_add_event(pw_thread_loop_get_loop(connection.loop), { data, _ in
                Unmanaged<PipeWireStream>.fromOpaque(data!).takeUnretainedValue().reconnect()
            }, context)
        }
    }

    /// One events table for every stream's state changes (no process callback in it).
    nonisolated(unsafe) private static let stateEvents: UnsafeMutablePointer<pw_stream_events> = {
        let events = UnsafeMutablePointer<pw_stream_events>.allocate(capacity: 1)
        events.initialize(to: pw_stream_events())
        events.pointee.version = UInt32(PW_VERSION_STREAM_EVENTS)
        events.pointee.state_changed = { data, old, state, error in
            guard let data else { return }
            let stream = Unmanaged<PipeWireStream>.fromOpaque(data).takeUnretainedValue()
            if state == PW_STREAM_STATE_STREAMING {
                if old == PW_STREAM_STATE_PAUSED, stream.hasStreamed, stream.reconnectsOnResume,
                   let event = stream.reconnectEvent {
                    // Not from inside the stream's own event: relinking destroys what emits it.
                    _ = voiceio_pw_loop_signal_event(pw_thread_loop_get_loop(stream.connection.loop), event)
                    return
                }
                stream.hasStreamed = true
            }
            if state == PW_STREAM_STATE_ERROR {
                let failure = PipeWireError("run the \(stream.direction.label) stream",
                                            server: stream.connection.serverName, code: 0,
                                            message: error.map { String(cString: $0) } ?? "stream error")
                stream.streamError.withLock { if $0 == nil { $0 = failure } }
            }
            pw_thread_loop_signal(stream.connection.loop, false)
        }
        return events
    }()

    deinit {
        connection.withLock {
            if let reconnectEvent {
                voiceio_pw_loop_destroy_source(pw_thread_loop_get_loop(connection.loop), reconnectEvent)
            }
            spa_hook_remove(stateHook)
            spa_hook_remove(hook)
            pw_stream_destroy(stream)
        }
        stateHook.deallocate()
        hook.deallocate()
        events.deallocate()
    }

    /// The error the stream reported (its node failed, was refused a link or its server went away), or nil.
    var failure: PipeWireError? { streamError.withLock { $0 } }

    /// Times the stream was relinked after a resume. Safe from any thread.
    var relinkCount: Int { relinks.load(ordering: .relaxed) }

    /// Connects the stream for mono Float32 at `sampleRate`, to its target or wherever the session manager
    /// links it, mapping buffers and calling `process` on the real-time data thread.
    func connect(sampleRate: Int) throws(PipeWireError) {
        var podStorage = [UInt8](repeating: 0, count: 1024)
        let result: Int32 = podStorage.withUnsafeMutableBufferPointer { storage in
            connection.withLock {
                connectedRate = sampleRate
                return connectLocked(storage, sampleRate)
            }
        }
        guard result >= 0 else {
            throw PipeWireError("connect the \(direction.label) stream", server: connection.serverName, code: result)
        }
    }

    /// On the loop thread (lock held), from `reconnectEvent`: disconnects and connects again at the same rate.
    private func reconnect() {
        relinks.add(1, ordering: .relaxed)
        _ = pw_stream_disconnect(stream)
        hasStreamed = false
        var podStorage = [UInt8](repeating: 0, count: 1024)
        let result = podStorage.withUnsafeMutableBufferPointer { storage in connectLocked(storage, connectedRate) }
        if result < 0 {
            let failure = PipeWireError("reconnect the \(direction.label) stream after a resume",
                                        server: connection.serverName, code: result)
            streamError.withLock { if $0 == nil { $0 = failure } }
        }
    }

    private func connectLocked(_ storage: UnsafeMutableBufferPointer<UInt8>, _ sampleRate: Int) -> Int32 {
        var format: UnsafePointer<spa_pod>? = voiceio_pw_mono_float_format(
            storage.baseAddress, UInt32(storage.count), UInt32(sampleRate))
        let flags = PW_STREAM_FLAG_AUTOCONNECT.rawValue | PW_STREAM_FLAG_MAP_BUFFERS.rawValue
            | PW_STREAM_FLAG_RT_PROCESS.rawValue
        return pw_stream_connect(stream, direction == .playback ? SPA_DIRECTION_OUTPUT : SPA_DIRECTION_INPUT,
                                 voiceio_pw_id_any, pw_stream_flags(rawValue: flags), &format, 1)
    }

    /// Disconnects the stream (its process callback is no longer called once this returns).
    func disconnect() {
        connection.withLock { _ = pw_stream_disconnect(stream) }
    }
}
