import VoiceIO

/// The network thread's half of sending: takes the captured voice the audio thread queued, converts it to the
/// codec rate when Opus does not take the voice rate, encodes whole frames and packetises them as RTP.
///
/// ```
/// audio thread: sendCaptured ─► capture ring (voice rate) ─┐
/// network thread:                                          └─► [Resampler] ─► frame ─► OpusEncoder ─► RTPSender ─► send
/// ```
/// Owned by the network thread; storage is allocated in `init`, `drain` allocates nothing.
final class SendPath {
    let capture: SPSCRing<Float>
    let encoder: OpusEncoder
    private(set) var sender: RTPSender
    private let resampler: Resampler?
    private let pending: UnsafeMutableBufferPointer<Float>
    private var pendingStart = 0
    private var pendingEnd = 0
    private let frame: UnsafeMutableBufferPointer<Float>
    private var frameFill = 0
    private let encoded: UnsafeMutableRawBufferPointer
    private let datagram: UnsafeMutableRawBufferPointer
    private(set) var framesSkippedByDTX = 0
    private let voiceRate: Int
    private let codecRate: Int

    init(configuration: CallConfiguration) throws(CallError) {
        let format: OpusFormat
        do {
            format = try OpusFormat(sampleRate: configuration.codecRate,
                                    frameDurationMilliseconds: configuration.frameDurationMilliseconds)
            encoder = try OpusEncoder(.init(format: format, bitsPerSecond: configuration.bitsPerSecond,
                                            complexity: configuration.opusComplexity,
                                            inbandFEC: configuration.inbandFEC,
                                            expectedPacketLossPercent: configuration.inbandFEC ? 10 : 0,
                                            dtx: configuration.dtx))
        } catch {
            throw .codec(error)
        }
        if configuration.voiceRate != format.sampleRate {
            do {
                resampler = try Resampler(inputRate: configuration.voiceRate, outputRate: format.sampleRate, quality: 5)
            } catch {
                throw .resampler(error)
            }
        } else {
            resampler = nil
        }
        voiceRate = configuration.voiceRate
        codecRate = format.sampleRate
        capture = SPSCRing(minimumCapacity: configuration.voiceRate * configuration.captureCapacityMilliseconds / 1000,
                           filledWith: 0)
        sender = RTPSender(payloadType: configuration.payloadType)
        pending = .allocate(capacity: configuration.voiceRate / 100)
        pending.initialize(repeating: 0)
        frame = .allocate(capacity: format.frameCount)
        frame.initialize(repeating: 0)
        encoded = .allocate(byteCount: OpusEncoder.maxPacketByteCount, alignment: 8)
        datagram = .allocate(byteCount: OpusEncoder.maxPacketByteCount + RTPHeader.fixedByteCount, alignment: 8)
    }

    deinit {
        pending.deallocate()
        frame.deallocate()
        encoded.deallocate()
        datagram.deallocate()
    }

    /// Captured frames (at the voice rate) still missing before the next Opus frame is whole; 0 or less when one
    /// is ready. Read by the network thread to sleep until then.
    var captureFramesMissing: Int {
        let codecFramesMissing = frame.count - frameFill
        // At the codec rate when converting; rounded up to whole voice frames.
        let voiceFramesMissing = (codecFramesMissing * voiceRate + codecRate - 1) / codecRate
        return voiceFramesMissing - (pendingEnd - pendingStart) - capture.availableToRead
    }

    /// Encodes every whole frame captured so far and hands each RTP datagram to `send`.
    func drain(_ send: (UnsafeRawBufferPointer) -> Void) {
        while fillFrame() {
            frameFill = 0
            encodeFrame(send)
        }
    }

    /// Moves captured audio into `frame`; true once it is full.
    private func fillFrame() -> Bool {
        guard let resampler else {
            guard capture.availableToRead >= frame.count else { return false }
            capture.read(into: frame)
            return true
        }
        while frameFill < frame.count {
            if pendingStart == pendingEnd {
                pendingStart = 0
                pendingEnd = capture.read(into: pending)
                if pendingEnd == 0 { return false }
            }
            let used = resampler.process(input: UnsafeBufferPointer(rebasing: pending[pendingStart..<pendingEnd]),
                                         output: UnsafeMutableBufferPointer(rebasing: frame[frameFill...]))
            pendingStart += used.inputFrames
            frameFill += used.outputFrames
            if used.inputFrames == 0 && used.outputFrames == 0 { return false }
        }
        return true
    }

    private func encodeFrame(_ send: (UnsafeRawBufferPointer) -> Void) {
        let ticks = encoder.configuration.format.rtpTicksPerPacket
        let byteCount: Int
        do { byteCount = try encoder.encode(UnsafeBufferPointer(frame), into: encoded) } catch {
            sender.skip(rtpTicks: ticks)
            return
        }
        if encoder.configuration.dtx && byteCount <= OpusEncoder.dtxPacketByteCount {
            sender.skip(rtpTicks: ticks)
            framesSkippedByDTX += 1
            return
        }
        let payload = UnsafeRawBufferPointer(rebasing: encoded[..<byteCount])
        guard let datagramBytes = sender.packetize(payload, rtpTicks: ticks, into: datagram) else { return }
        send(UnsafeRawBufferPointer(rebasing: datagram[..<datagramBytes]))
    }
}
