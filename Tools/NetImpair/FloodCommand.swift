import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO

/// `netimpair flood`: strangers at a peer's listening port: from several addresses of 127.0.0.0/8 (ports of
/// their own), half well-formed Opus RTP of a loud tone with their own SSRCs, half random bytes (some
/// RTCP-looking). Paced at --rate, bounded by --seconds and --count; only to 127.0.0.0/8.
struct FloodCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flood", abstract: "Flood a 127.0.0.0/8 port with foreign RTP and garbage.")

    @Option(help: "The port under attack, HOST:PORT within 127.0.0.0/8.") var target: String
    @Option(help: "Datagrams per second (all sources together).") var rate = 20000.0
    @Option(help: "Also write the counts as JSON to this file when done (sent, toneRTP, garbage, seconds, sendErrors).")
    var report: String?

    struct Counts: Codable {
        var sent: Int
        var toneRTP: Int
        var garbage: Int
        var seconds: Double
        var sendErrors: Int
    }
    @Option(help: "Stop after this many seconds.") var seconds = 10.0
    @Option(help: "Stop after this many datagrams.") var count = 2_000_000
    @Option(help: "Source addresses 127.0.0.1 … 127.0.0.N (those that can be bound).") var sources = 3
    @Option var seed: UInt64 = 9

    func validate() throws {
        guard target.hasPrefix("127.") else { throw ValidationError("--target must be within 127.0.0.0/8") }
        guard rate > 0, rate <= 200_000, seconds > 0, seconds <= 600, count > 0, (1...250).contains(sources) else {
            throw ValidationError("--rate within 1–200000, --seconds within 0–600, --count positive, --sources 1–250")
        }
    }

    func run() throws {
        let destination = try SocketAddress.resolve(target)
        let sockets = (1...sources).compactMap { try? UDPSocket(binding: "127.0.0.\($0):0") }
        guard !sockets.isEmpty else { throw ValidationError("no source address could be bound") }
        var foreign = try ForeignPackets(payloadType: RTPHeader.defaultPayloadType, seed: seed)
        let ssrcs = sockets.map { _ in foreign.randomSSRC() }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
        defer { buffer.deallocate() }
        let start = Clock.nanoseconds()
        let startSeconds = Clock.seconds()
        var sent = [0, 0]
        var errors = 0
        print("flood: \(target) from \(sockets.map { $0.localAddress.description }.joined(separator: ", ")) at \(Int(rate))/s for \(seconds) s (at most \(count))")
        fflush(nil)
        while sent[0] + sent[1] < count {
            let elapsed = Double(Clock.nanoseconds() - start) / 1e9
            guard elapsed < seconds else { break }
            let due = min(Int(elapsed * rate), count) - sent[0] - sent[1]
            if due <= 0 {
                usleep(200)
                continue
            }
            for _ in 0..<min(due, 1000) {
                let index = sent[0] + sent[1]
                let source = index % sockets.count
                let kind = (index / sockets.count) % 2
                let byteCount = kind == 0 ? foreign.toneRTP(ssrc: ssrcs[source], into: buffer) : foreign.garbage(into: buffer)
                do { try sockets[source].send(UnsafeRawBufferPointer(rebasing: buffer[..<byteCount]), to: destination) } catch {
                    errors += 1
                }
                sent[kind] += 1
            }
        }
        let elapsed = Clock.seconds() - startSeconds
        if let report {
            let counts = Counts(sent: sent[0] + sent[1], toneRTP: sent[0], garbage: sent[1], seconds: elapsed, sendErrors: errors)
            try ReportJSON.encode(counts).write(toFile: report, atomically: true, encoding: .utf8)
        }
        print(String(cFormat: "flood: sent=%d (tone RTP %d, garbage %d) in %.2f s = %.0f/s, send errors %d, monotonic %.3f–%.3f s",
                     sent[0] + sent[1], sent[0], sent[1], elapsed, Double(sent[0] + sent[1]) / elapsed, errors,
                     startSeconds, startSeconds + elapsed))
    }
}
