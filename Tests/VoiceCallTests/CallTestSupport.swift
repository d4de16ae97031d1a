import Foundation
@testable import VoiceCall

/// Runs `body(period)` once per period of the monotonic clock, on absolute deadlines, like an audio device's
/// I/O thread: late periods run back to back (audio is never skipped), so the call sees real timing.
func runInRealTime(periods: Int, periodMilliseconds: Int = 10, _ body: (Int) -> Void) {
    let periodNanoseconds = periodMilliseconds * 1_000_000
    var deadline = timespec()
    clock_gettime(CLOCK_MONOTONIC, &deadline)
    for period in 0..<periods {
        body(period)
        let next = deadline.tv_nsec + periodNanoseconds
        deadline.tv_sec += next / 1_000_000_000
        deadline.tv_nsec = next % 1_000_000_000
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, nil) == EINTR {}
    }
}

/// Waits (polling every millisecond, at most `seconds`) until `condition` holds; returns whether it did.
func waitUntil(seconds: Double = 2, _ condition: () -> Bool) -> Bool {
    let end = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > end { return false }
        usleep(1000)
    }
    return true
}

/// Two sessions on 127.0.0.1 sending to each other directly or, with `through`, via a relay.
struct CallPair {
    let a: CallSession
    let b: CallSession

    init(voiceRate: Int = 16000, configure: (inout CallConfiguration) -> Void = { _ in },
         relay: ((SocketAddress, SocketAddress) throws -> SocketAddress)? = nil) throws {
        let socketA = try UDPSocket(binding: "127.0.0.1:0")
        let socketB = try UDPSocket(binding: "127.0.0.1:0")
        let relayAddress = try relay?(socketA.localAddress, socketB.localAddress)
        var configurationA = CallConfiguration(remote: relayAddress ?? socketB.localAddress)
        var configurationB = CallConfiguration(remote: relayAddress ?? socketA.localAddress)
        for index in [0, 1] {
            var configuration = index == 0 ? configurationA : configurationB
            configuration.voiceRate = voiceRate
            configure(&configuration)
            if index == 0 { configurationA = configuration } else { configurationB = configuration }
        }
        a = try CallSession(socket: socketA, configuration: configurationA)
        b = try CallSession(socket: socketB, configuration: configurationB)
    }

    func start() throws {
        try a.start()
        try b.start()
    }

    func stop() {
        a.stop()
        b.stop()
    }

    /// A talks `talk` (B is silent) in 10 ms periods in real time, then both keep going silent for
    /// `tailPeriods`; returns what B rendered over the whole run.
    func talk(_ talk: [Float], voiceRate: Int, tailPeriods: Int = 20) -> [Float] {
        let blockFrames = voiceRate / 100
        let periods = talk.count / blockFrames + tailPeriods
        let silence = [Float](repeating: 0, count: blockFrames)
        var scratch = [Float](repeating: 0, count: blockFrames)
        var heard = [Float](repeating: 0, count: periods * blockFrames)
        runInRealTime(periods: periods) { period in
            let start = period * blockFrames
            if start + blockFrames <= talk.count {
                talk[start..<(start + blockFrames)].withUnsafeBufferPointer { a.sendCaptured($0) }
            } else {
                silence.withUnsafeBufferPointer { a.sendCaptured($0) }
            }
            silence.withUnsafeBufferPointer { b.sendCaptured($0) }
            heard[start..<(start + blockFrames)].withUnsafeMutableBufferPointer { b.renderReceived(into: $0) }
            scratch.withUnsafeMutableBufferPointer { a.renderReceived(into: $0) }
        }
        return heard
    }
}

/// Builds Opus RTP packets of one SSRC, as a foreign or test sender would.
struct RTPStreamFixture {
    var sender: RTPSender
    let encoder: OpusEncoder

    init(ssrc: UInt32, sampleRate: Int = 16000) throws {
        sender = RTPSender(ssrc: ssrc)
        encoder = try OpusEncoder(.init(format: OpusFormat(sampleRate: sampleRate)))
    }

    /// One datagram per 20 ms frame of `signal`.
    mutating func packets(_ signal: [Float]) throws -> [[UInt8]] {
        let frameCount = encoder.configuration.format.frameCount
        var packets: [[UInt8]] = []
        var payload = [UInt8](repeating: 0, count: OpusEncoder.maxPacketByteCount)
        var datagram = [UInt8](repeating: 0, count: 1500)
        for start in stride(from: 0, through: signal.count - frameCount, by: frameCount) {
            let byteCount = try signal[start..<(start + frameCount)].withUnsafeBufferPointer { frame in
                try payload.withUnsafeMutableBytes { try encoder.encode(frame, into: $0) }
            }
            let total = payload.withUnsafeBytes { bytes in
                datagram.withUnsafeMutableBytes {
                    sender.packetize(UnsafeRawBufferPointer(rebasing: bytes[..<byteCount]), rtpTicks: 960, into: $0)
                }
            }
            packets.append(Array(datagram[..<total!]))
        }
        return packets
    }
}

extension UDPSocket {
    func send(_ bytes: [UInt8], to destination: SocketAddress) throws {
        try bytes.withUnsafeBytes { try send($0, to: destination) }
    }
}

extension TestSignals {
    /// For each window of `windowFrames` of `sent` (after `skipFrames`), the best correlation with `heard`
    /// at any lag in 0 ... `maxLagFrames`: searched on every `step`-th sample, then refined at full rate.
    /// Windowed so that a jitter buffer changing its delay mid-call does not spoil the match.
    static func windowedCorrelations(sent: [Float], heard: [Float], windowFrames: Int, skipFrames: Int,
                                     maxLagFrames: Int, step: Int = 4) -> [Double] {
        var results: [Double] = []
        var start = skipFrames
        while start + windowFrames <= sent.count {
            var best = (lag: 0, value: -1.0)
            for lag in stride(from: 0, through: maxLagFrames, by: step) {
                let value = windowCorrelation(sent, heard, start: start, count: windowFrames, lag: lag, step: step)
                if value > best.value { best = (lag, value) }
            }
            var refined = best.value
            for lag in max(0, best.lag - step)...(best.lag + step) {
                refined = max(refined, windowCorrelation(sent, heard, start: start, count: windowFrames, lag: lag, step: 1))
            }
            results.append(refined)
            start += windowFrames
        }
        return results
    }

    private static func windowCorrelation(_ a: [Float], _ b: [Float], start: Int, count: Int, lag: Int, step: Int) -> Double {
        guard start + count + lag <= b.count else { return 0 }
        return a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                var sumAB = 0.0, sumAA = 0.0, sumBB = 0.0, sumA = 0.0, sumB = 0.0
                var index = start
                var n = 0.0
                while index < start + count {
                    let x = Double(a[index]), y = Double(b[index + lag])
                    sumA += x; sumB += y; sumAB += x * y; sumAA += x * x; sumBB += y * y
                    n += 1
                    index += step
                }
                let variance = (sumAA - sumA * sumA / n) * (sumBB - sumB * sumB / n)
                return variance > 0 ? (sumAB - sumA * sumB / n) / variance.squareRoot() : 0
            }
        }
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}
