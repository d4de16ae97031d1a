import CPipeWire
import Glibc

/// One audio node from a PipeWire server's registry.
public struct PipeWireNode: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// Plays (`Audio/Sink`); its monitor can be captured.
        case sink
        /// Captures (`Audio/Source`, `Audio/Source/Virtual`).
        case source
    }

    /// The registry id.
    public let id: UInt32
    /// `node.name`: what `--device pipewire:NAME` and `target.object` take.
    public let name: String
    /// `node.description` (or `node.nick`), empty when the node has none.
    public let description: String
    public let kind: Kind
    /// The session manager's default sink (for a sink) or source (for a source).
    public let isDefault: Bool
    /// A sink whose monitor is the default source (the session manager's default source names the sink).
    public let isDefaultSourceMonitor: Bool
}

/// Lists a PipeWire server's audio sinks and sources, and which are the defaults (the `default` metadata that
/// the session manager keeps). Not real-time safe.
public enum PipeWireNodeList {
    /// The sinks and sources on `server` (nil: libpipewire's default), in registry order.
    public static func nodes(server: String? = nil) throws(PipeWireError) -> [PipeWireNode] {
        let connection = try PipeWireConnection(server: server, name: "voiceio-registry")
        return try nodes(on: connection)
    }

    static func nodes(on connection: PipeWireConnection) throws(PipeWireError) -> [PipeWireNode] {
        let collector = RegistryCollector()
        let context = Unmanaged.passUnretained(collector).toOpaque()
        let hooks = UnsafeMutablePointer<spa_hook>.allocate(capacity: 2)
        hooks.initialize(repeating: spa_hook(), count: 2)
        defer { hooks.deallocate() }
        var registry: OpaquePointer?
        defer {
            connection.withLock {
                if let metadata = collector.metadata {
                    spa_hook_remove(hooks + 1)
                    voiceio_pw_proxy_destroy(UnsafeMutableRawPointer(metadata))
                }
                if let registry {
                    spa_hook_remove(hooks)
                    voiceio_pw_proxy_destroy(UnsafeMutableRawPointer(registry))
                }
            }
        }
        try connection.withLock { () throws(PipeWireError) in
            guard let made = voiceio_pw_core_get_registry(connection.core) else {
                throw PipeWireError("read the registry", server: connection.serverName, code: -12)
            }
            registry = made
            collector.registry = made
            collector.metadataHook = hooks + 1
            _ = voiceio_pw_registry_add_listener(made, hooks, RegistryCollector.registryEvents, context)
            // The first round trip brings the globals; the default metadata, bound among them, needs a second.
            try connection.roundTrip()
            if collector.metadata != nil { try connection.roundTrip() }
        }
        return collector.found.map { node in
            let defaultName = node.kind == .sink ? collector.defaultSink : collector.defaultSource
            return PipeWireNode(id: node.id, name: node.name, description: node.description, kind: node.kind,
                                isDefault: node.name == defaultName,
                                isDefaultSourceMonitor: node.kind == .sink && node.name == collector.defaultSource)
        }
    }
}

/// Collects registry and metadata events on the loop thread (with its lock held).
private final class RegistryCollector {
    var found: [(id: UInt32, name: String, description: String, kind: PipeWireNode.Kind)] = []
    var registry: OpaquePointer?
    var metadata: OpaquePointer?
    var metadataHook: UnsafeMutablePointer<spa_hook>?
    var defaultSink: String?
    var defaultSource: String?

    nonisolated(unsafe) static let registryEvents: UnsafeMutablePointer<pw_registry_events> = {
        let events = UnsafeMutablePointer<pw_registry_events>.allocate(capacity: 1)
        events.initialize(to: pw_registry_events())
        events.pointee.version = UInt32(PW_VERSION_REGISTRY_EVENTS)
        events.pointee.global = { data, id, _, type, _, properties in
            guard let data, let type, let properties else { return }
            let collector = Unmanaged<RegistryCollector>.fromOpaque(data).takeUnretainedValue()
            let lookup = { (key: String) in voiceio_pw_dict_lookup(properties, key).map { String(cString: $0) } }
            if strcmp(type, voiceio_pw_type_node()) == 0 {
                let kind: PipeWireNode.Kind
                switch lookup("media.class") {
                case "Audio/Sink": kind = .sink
                case "Audio/Source", "Audio/Source/Virtual": kind = .source
                default: return
                }
                guard let name = lookup("node.name") else { return }
                let description = lookup("node.description") ?? lookup("node.nick") ?? ""
                collector.found.append((id, name, description, kind))
            } else if strcmp(type, voiceio_pw_type_metadata()) == 0, lookup("metadata.name") == "default",
                      collector.metadata == nil, let registry = collector.registry, let hook = collector.metadataHook,
                      let metadata = voiceio_pw_registry_bind_metadata(registry, id) {
                // Listen at once: the values follow the bind, possibly in the batch that answers the round trip.
                collector.metadata = metadata
                _ = voiceio_pw_metadata_add_listener(metadata, hook, RegistryCollector.metadataEvents, data)
            }
        }
        return events
    }()

    nonisolated(unsafe) static let metadataEvents: UnsafeMutablePointer<pw_metadata_events> = {
        let events = UnsafeMutablePointer<pw_metadata_events>.allocate(capacity: 1)
        events.initialize(to: pw_metadata_events())
        events.pointee.version = UInt32(PW_VERSION_METADATA_EVENTS)
        events.pointee.property = { data, subject, key, _, value in
            guard let data, subject == 0, let key, let value else { return 0 }
            let collector = Unmanaged<RegistryCollector>.fromOpaque(data).takeUnretainedValue()
            let name = RegistryCollector.nodeName(inJSON: String(cString: value))
            switch String(cString: key) {
            case "default.audio.sink": collector.defaultSink = name
            case "default.audio.source": collector.defaultSource = name
            default: break
            }
            return 0
        }
        return events
    }()

    /// The `name` of a metadata value such as `{ "name": "room" }` (the form the session manager writes).
    static func nodeName(inJSON value: String) -> String? {
        guard let key = value.firstRange(of: "\"name\"") else { return nil }
        let rest = value[key.upperBound...].drop { $0 == " " || $0 == ":" }
        guard rest.first == "\"" else { return nil }
        let body = rest.dropFirst()
        guard let end = body.firstIndex(of: "\"") else { return nil }
        return String(body[..<end])
    }
}
