import Foundation
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

/// A UDP forwarder between two endpoints that impairs the RTP going from `a` to `b` with seeded loss,
/// duplication, reordering and jitter; everything else (RTCP, the other direction) passes straight through.
final class ImpairmentRelay: @unchecked Sendable {
    struct Impairment {
        var lossPercent = 0.0
        var duplicatePercent = 0.0
        /// Share of packets held back an extra `reorderDelayMilliseconds`, so later ones overtake them.
        var reorderPercent = 0.0
        var reorderDelayMilliseconds = 45.0
        /// Each impaired packet is delayed by a uniform 0 ... this.
        var jitterMilliseconds = 0.0
        var seed: UInt64 = 7
    }

    private struct Pending {
        var dueNanoseconds: Int64
        var bytes: [UInt8]
        var destination: SocketAddress
    }

    let socket: UDPSocket
    private let a: SocketAddress
    private let b: SocketAddress
    private let impairment: Impairment
    private var generator: SplitMix64
    private var pending: [Pending] = []
    private let lock = NSLock()
    private var stopping = false
    private let finished = DispatchSemaphore(value: 0)
    private(set) var dropped = 0
    private(set) var duplicated = 0
    private(set) var reordered = 0
    private(set) var forwarded = 0

    var address: SocketAddress { socket.localAddress }

    init(between a: SocketAddress, and b: SocketAddress, impairment: Impairment) throws {
        socket = try UDPSocket(binding: "127.0.0.1:0")
        self.a = a
        self.b = b
        self.impairment = impairment
        generator = SplitMix64(seed: impairment.seed)
        Thread.detachNewThread { [self] in run() }
    }

    func stop() {
        lock.withLock { stopping = true }
        finished.wait()
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 2048)
        while !isStopping {
            if let datagram = try? buffer.withUnsafeMutableBytes({ try socket.receive(into: $0, timeoutMilliseconds: 1) }) {
                let bytes = Array(buffer[..<datagram.byteCount])
                if datagram.source == a {
                    let isRTP = bytes.withUnsafeBytes { DatagramKind(classifying: $0) } == .rtp
                    isRTP ? impair(bytes) : schedule(bytes, to: b, afterMilliseconds: 0)
                } else if datagram.source == b {
                    schedule(bytes, to: a, afterMilliseconds: 0)
                }
            }
            let now = MonotonicClock.nanoseconds()
            let due = pending.filter { $0.dueNanoseconds <= now }
            pending.removeAll { $0.dueNanoseconds <= now }
            for packet in due.sorted(by: { $0.dueNanoseconds < $1.dueNanoseconds }) {
                try? socket.send(packet.bytes, to: packet.destination)
                forwarded += 1
            }
        }
        finished.signal()
    }

    private func impair(_ bytes: [UInt8]) {
        if chance(impairment.lossPercent) {
            dropped += 1
            return
        }
        var delay = Double.random(in: 0...max(impairment.jitterMilliseconds, 0), using: &generator)
        if chance(impairment.reorderPercent) {
            delay += impairment.reorderDelayMilliseconds
            reordered += 1
        }
        schedule(bytes, to: b, afterMilliseconds: delay)
        if chance(impairment.duplicatePercent) {
            duplicated += 1
            schedule(bytes, to: b, afterMilliseconds: delay + 3)
        }
    }

    private func chance(_ percent: Double) -> Bool { Double.random(in: 0..<100, using: &generator) < percent }

    private func schedule(_ bytes: [UInt8], to destination: SocketAddress, afterMilliseconds delay: Double) {
        pending.append(Pending(dueNanoseconds: MonotonicClock.nanoseconds() + Int64(delay * 1e6), bytes: bytes,
                               destination: destination))
    }
}
