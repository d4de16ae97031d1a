import Synchronization

/// A `Float` shared between threads through its bit pattern; loads and stores are relaxed and real-time safe.
struct AtomicFloat: ~Copyable, Sendable {
    private let bits: Atomic<UInt32>

    init(_ value: Float) { bits = Atomic(value.bitPattern) }

    func load() -> Float { Float(bitPattern: bits.load(ordering: .relaxed)) }

    func store(_ value: Float) { bits.store(value.bitPattern, ordering: .relaxed) }
}

/// A `Double` shared between threads through its bit pattern; loads and stores are relaxed and real-time safe.
struct AtomicDouble: ~Copyable, Sendable {
    private let bits: Atomic<UInt64>

    init(_ value: Double) { bits = Atomic(value.bitPattern) }

    func load() -> Double { Double(bitPattern: bits.load(ordering: .relaxed)) }

    func store(_ value: Double) { bits.store(value.bitPattern, ordering: .relaxed) }
}
