import Synchronization
import VoiceIO

/// The audio thread's half of receiving: drains the RTP the network thread accepted into the jitter buffer,
/// pulls decoded voice at the codec rate and converts it to the voice rate when they differ, and reports the
/// jitter buffer's statistics back through a ring.
///
/// ```
/// network thread: accepted RTP ─► incoming DatagramQueue ─┐
/// audio thread:                                           └─► JitterBuffer (decode, FEC, PLC, latency control) ─► [Resampler] ─► render
///                                              statistics ring ◄─┘ (every ~100 ms)
/// ```
/// `render` is real-time safe: storage is allocated in `init`; it reads CLOCK_MONOTONIC (a vDSO call on Linux:
/// no kernel entry, no lock) to time the jitter buffer's start against packet arrivals and to count its own cost.
final class PlayoutPath {
    let incoming: DatagramQueue
    let reports: SPSCRing<JitterBufferStatistics>
    private let jitterBuffer: JitterBuffer
    private let resampler: Resampler?
    private let datagram: UnsafeMutableRawBufferPointer
    private let decoded: UnsafeMutableBufferPointer<Float>
    private var decodedStart = 0
    private var decodedEnd = 0
    private let reportIntervalFrames: Int
    private var framesSinceReport = 0
    private let renderTime = Atomic<Int64>(0)

    init(configuration: CallConfiguration) throws(CallError) {
        let codecRate = configuration.codecRate
        do {
            jitterBuffer = try JitterBuffer(sampleRate: codecRate, packetMilliseconds: configuration.frameDurationMilliseconds,
                                            initialDelayMilliseconds: configuration.jitterInitialDelayMilliseconds,
                                            maxDelayMilliseconds: configuration.jitterMaxDelayMilliseconds)
        } catch {
            throw .codec(error)
        }
        if configuration.voiceRate != codecRate {
            do {
                resampler = try Resampler(inputRate: codecRate, outputRate: configuration.voiceRate, quality: 5)
            } catch {
                throw .resampler(error)
            }
        } else {
            resampler = nil
        }
        incoming = DatagramQueue(datagramCapacity: 64)
        reports = SPSCRing(minimumCapacity: 4, filledWith: JitterBufferStatistics())
        datagram = .allocate(byteCount: incoming.maxDatagramByteCount, alignment: 8)
        decoded = .allocate(capacity: codecRate / 100)
        decoded.initialize(repeating: 0)
        reportIntervalFrames = configuration.voiceRate / 10
    }

    deinit {
        datagram.deallocate()
        decoded.deallocate()
    }

    /// Fills all of `output` with received voice at the voice rate (concealment or silence when there is none).
    /// Real-time safe.
    func render(into output: UnsafeMutableBufferPointer<Float>) {
        while let (byteCount, ticks) = incoming.dequeue(into: datagram) {
            // The network thread parsed it already; parsing again only rebuilds the view.
            if let packet = try? RTPPacket.parse(UnsafeRawBufferPointer(rebasing: datagram[..<byteCount])) {
                jitterBuffer.push(packet, arrivalTicks: ticks)
            }
        }
        let startNanoseconds = MonotonicClock.nanoseconds()
        let nowTicks = MonotonicClock.rtpTicks(at: startNanoseconds)
        if let resampler {
            convert(into: output, with: resampler, nowTicks: nowTicks)
        } else {
            jitterBuffer.pull(into: output, nowTicks: nowTicks)
        }
        framesSinceReport += output.count
        if framesSinceReport >= reportIntervalFrames, reports.availableToWrite > 0 {
            framesSinceReport = 0
            var snapshot = jitterBuffer.statistics
            _ = withUnsafePointer(to: &snapshot) { reports.write(UnsafeBufferPointer(start: $0, count: 1)) }
        }
        renderTime.add(MonotonicClock.nanoseconds() - startNanoseconds, ordering: .relaxed)
    }

    /// Time spent in `render` so far (jitter buffer, decoding, conversion), in nanoseconds. Any thread.
    var renderNanoseconds: Int64 { renderTime.load(ordering: .relaxed) }

    private func convert(into output: UnsafeMutableBufferPointer<Float>, with resampler: Resampler, nowTicks: Int64) {
        var written = 0
        while written < output.count {
            if decodedStart == decodedEnd {
                jitterBuffer.pull(into: decoded, nowTicks: nowTicks)
                decodedStart = 0
                decodedEnd = decoded.count
            }
            let used = resampler.process(input: UnsafeBufferPointer(rebasing: decoded[decodedStart..<decodedEnd]),
                                         output: UnsafeMutableBufferPointer(rebasing: output[written...]))
            decodedStart += used.inputFrames
            written += used.outputFrames
            if used.inputFrames == 0 && used.outputFrames == 0 { break }
        }
        if written < output.count { UnsafeMutableBufferPointer(rebasing: output[written...]).update(repeating: 0) }
    }
}
