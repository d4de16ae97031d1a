import CPipeWire
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One client connection to a PipeWire server: a `pw_thread_loop` (the thread that runs libpipewire's events),
/// a context on it and the core connected to the server. Streams and registry listeners made on it run their
/// events on that thread with its lock held; `withLock` takes the same lock from any other thread.
///
/// The core's `error` event (a server that died or refused a request) is kept: `coreError` is the first fatal
/// one. Nothing here is real-time safe.
final class PipeWireConnection: @unchecked Sendable {
    /// The server as the caller named it (socket path or name), or nil for libpipewire's default.
    let server: String?
    let loop: OpaquePointer
    let context: OpaquePointer
    let core: OpaquePointer
    private let coreHook: UnsafeMutablePointer<spa_hook>
    private let coreEvents: UnsafeMutablePointer<pw_core_events>
    /// Touched only with the loop lock held (by the loop thread's events and by `roundTrip`).
    private var lastDoneSequence: Int32 = -1
    private let fatalError = Mutex<PipeWireError?>(nil)

    private static let libraryInitialized: Void = { pw_init(nil, nil) }()

    /// A name for messages: the socket path or name asked for, or the one libpipewire falls back to.
    static func displayName(server: String?) -> String {
        if let server { return server }
        let environment = ProcessInfo.processInfo.environment
        let remote = environment["PIPEWIRE_REMOTE"] ?? "pipewire-0"
        if remote.hasPrefix("/") { return remote }
        let directory = environment["PIPEWIRE_RUNTIME_DIR"] ?? environment["XDG_RUNTIME_DIR"] ?? "$XDG_RUNTIME_DIR"
        return "\(directory)/\(remote)"
    }

    var serverName: String { Self.displayName(server: server) }

    /// Connects to `server` (a socket path such as `/run/user/1000/pipewire-0`, a name in the runtime
    /// directory, or nil for `PIPEWIRE_REMOTE` or `pipewire-0`) and starts the loop thread named `name`.
    init(server: String?, name: String) throws(PipeWireError) {
        _ = Self.libraryInitialized
        self.server = server
        let display = Self.displayName(server: server)
        guard let loop = pw_thread_loop_new(name, nil) else {
            throw PipeWireError("create the event loop", server: display, code: -errno)
        }
        guard let context = pw_context_new(pw_thread_loop_get_loop(loop), nil, 0) else {
            let code = -errno
            pw_thread_loop_destroy(loop)
            throw PipeWireError("create a context", server: display, code: code)
        }
        let properties = voiceio_pw_properties_new()
        if let server { pw_properties_set(properties, PW_KEY_REMOTE_NAME, server) }
        pw_properties_set(properties, PW_KEY_APP_NAME, "voiceio")
        guard let core = pw_context_connect(context, properties, 0) else {
            let code = -errno
            pw_context_destroy(context)
            pw_thread_loop_destroy(loop)
            throw PipeWireError("connect", server: display, code: code)
        }
        self.loop = loop
        self.context = context
        self.core = core
        coreHook = .allocate(capacity: 1)
        coreHook.initialize(to: spa_hook())
        coreEvents = .allocate(capacity: 1)
        coreEvents.initialize(to: pw_core_events())
        coreEvents.pointee.version = UInt32(PW_VERSION_CORE_EVENTS)
        coreEvents.pointee.done = { data, id, sequence in
            guard id == voiceio_pw_id_core, let data else { return }
            let connection = Unmanaged<PipeWireConnection>.fromOpaque(data).takeUnretainedValue()
            connection.lastDoneSequence = sequence
            pw_thread_loop_signal(connection.loop, false)
        }
        coreEvents.pointee.error = { data, id, _, result, message in
            guard let data else { return }
            let connection = Unmanaged<PipeWireConnection>.fromOpaque(data).takeUnretainedValue()
            // Errors on other objects (a stream's node) reach the stream's own state; the core's are fatal.
            guard id == voiceio_pw_id_core else { return }
            let error = PipeWireError("keep the connection", server: connection.serverName, code: result,
                                      message: message.map { String(cString: $0) })
            connection.fatalError.withLock { if $0 == nil { $0 = error } }
            pw_thread_loop_signal(connection.loop, false)
        }
        _ = voiceio_pw_core_add_listener(core, coreHook, coreEvents, Unmanaged.passUnretained(self).toOpaque())
        let started = pw_thread_loop_start(loop)
        guard started >= 0 else {
            tearDown()
            throw PipeWireError("start the event loop", server: display, code: started)
        }
    }

    deinit { tearDown() }

    private func tearDown() {
        pw_thread_loop_stop(loop)
        spa_hook_remove(coreHook)
        pw_core_disconnect(core)
        pw_context_destroy(context)
        pw_thread_loop_destroy(loop)
        coreHook.deallocate()
        coreEvents.deallocate()
    }

    /// The first error the server reported on the connection (it died, or refused us), or nil.
    var coreError: PipeWireError? { fatalError.withLock { $0 } }

    /// Runs `body` with the loop lock held: libpipewire objects of this connection may be touched inside.
    func withLock<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        pw_thread_loop_lock(loop)
        defer { pw_thread_loop_unlock(loop) }
        return try body()
    }

    /// Waits, with the loop lock held (inside `withLock`), until the server has handled every earlier request
    /// and sent the events they cause, or `timeoutSeconds` pass, or the connection fails.
    func roundTrip(timeoutSeconds: Int = 5) throws(PipeWireError) {
        let sequence = voiceio_pw_core_sync(core, 0)
        guard sequence >= 0 else { throw PipeWireError("talk to the server", server: serverName, code: sequence) }
        var deadline = timespec()
        pw_thread_loop_get_time(loop, &deadline, Int64(timeoutSeconds) * 1_000_000_000)
        while lastDoneSequence != sequence {
            if let error = coreError { throw error }
            if pw_thread_loop_timed_wait_full(loop, &deadline) != 0 {
                throw PipeWireError("get an answer within \(timeoutSeconds) s", server: serverName, code: -ETIMEDOUT)
            }
        }
        if let error = coreError { throw error }
    }
}
