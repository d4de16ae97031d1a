import Synchronization
import VoiceIO

/// One iteration of the network thread: encode and send what was captured, sleep until a datagram comes or
/// the next thing is due (a whole frame of captured voice, an RTCP report) and judge what came, send the
/// report when due, publish statistics.
///
/// Incoming datagrams pass, in order: the remote address and port → RTP/RTCP demultiplexing (RFC 5761) →
/// with SRTP, authentication, the replay check and decryption (`SRTPTransport`) → bounds-checked parsing and the payload type → the latched SSRC (`SourceFilter`: probation, latch, takeover). Each refusal is counted
/// by reason. Accepted RTP goes to the audio thread through `PlayoutPath.incoming`, stamped with its arrival
/// on the 48 kHz clock. Owned by the network thread; it may allocate (RTCP reports), the audio thread never
/// waits on it.
final class NetworkLoop {
    private let configuration: CallConfiguration
    private let socket: UDPSocket
    private let sendPath: SendPath
    private let playout: PlayoutPath
    private let shared: SharedCallState
    private let srtp: SRTPTransport?
    private var filter: SourceFilter
    private var reception: RTPReceptionStatistics?
    private var statistics = CallStatistics()
    private let buffer: UnsafeMutableRawBufferPointer
    private let reportBuffer: UnsafeMutableRawBufferPointer
    private var nextReportNanoseconds: Int64
    private var generator = SystemRandomNumberGenerator()

    init(configuration: CallConfiguration, socket: UDPSocket, sendPath: SendPath, playout: PlayoutPath,
         shared: SharedCallState, srtp: SRTPTransport?) {
        self.srtp = srtp
        self.configuration = configuration
        self.socket = socket
        self.sendPath = sendPath
        self.playout = playout
        self.shared = shared
        filter = SourceFilter(restartSilenceTicks: Int64(configuration.sourceRestartSilenceSeconds * Double(OpusFormat.rtpClockRate)))
        buffer = .allocate(byteCount: 2048, alignment: 8)
        reportBuffer = .allocate(byteCount: 1500, alignment: 8)
        nextReportNanoseconds = MonotonicClock.nanoseconds()
        statistics.localSSRC = sendPath.sender.ssrc
        nextReportNanoseconds += drawReportInterval() / 2
    }

    deinit {
        buffer.deallocate()
        reportBuffer.deallocate()
    }

    /// Sleep past the moment the next frame is due, for the audio thread's pacing jitter; and the retry when
    /// captured voice is later than that.
    static let captureMarginNanoseconds: Int64 = 500_000
    /// How often to look for the audio side's first voice.
    static let startPollNanoseconds: Int64 = 1_000_000
    /// Captured voice this much overdue means the audio side stopped: sleep as when idle.
    static let captureStallNanoseconds: Int64 = 100_000_000

    func iterate() {
        sendCaptured()
        do {
            if let datagram = try socket.receive(into: buffer, timeoutNanoseconds: nanosecondsUntilDue()) {
                judge(datagram)
                // Take what else is waiting without sleeping, but keep sending on time.
                var extra = 0
                while extra < 32, let next = try socket.receive(into: buffer, timeoutMilliseconds: 0) {
                    judge(next)
                    extra += 1
                }
            }
        } catch {
            statistics.receiveErrors += 1
        }
        statistics.droppedByKernel = socket.kernelDropCount
        sendCaptured()
        if MonotonicClock.nanoseconds() >= nextReportNanoseconds {
            sendReport()
            nextReportNanoseconds = MonotonicClock.nanoseconds() + drawReportInterval()
        }
        publish()
    }

    /// How long to sleep: until the next whole frame of captured voice should be queued (the last queueing
    /// time plus the missing frames at the voice rate, plus a margin), the next RTCP report, or the idle wait.
    private func nanosecondsUntilDue() -> Int64 {
        let now = MonotonicClock.nanoseconds()
        var due = min(nextReportNanoseconds, now + Int64(configuration.idleWaitMilliseconds) * 1_000_000)
        let lastCapture = shared.lastCaptureNanoseconds.load(ordering: .acquiring)
        // Before the audio side's first voice, look often: sleeping through its start would send the first
        // frames in a burst, and the receiver's jitter buffer would keep the extra packet as delay.
        if lastCapture == 0 { due = min(due, now + Self.startPollNanoseconds) }
        if lastCapture > 0 {
            let frameDue = lastCapture + Int64(sendPath.captureFramesMissing) * 1_000_000_000 / Int64(configuration.voiceRate)
                + Self.captureMarginNanoseconds
            if frameDue + Self.captureStallNanoseconds > now {
                due = min(due, max(frameDue, now + Self.captureMarginNanoseconds))
            }
        }
        return max(due - now, 0)
    }

    // MARK: Sending

    private func sendCaptured() {
        sendPath.drain { datagram in
            do {
                try send(datagram, kind: .rtp)
                statistics.packetsSent += 1
                statistics.payloadBytesSent += datagram.count - RTPHeader.fixedByteCount
            } catch {
                statistics.sendErrors += 1
            }
        }
        statistics.framesSkippedByDTX = sendPath.framesSkippedByDTX
    }

    /// Sends to the remote, through SRTP when the call has keys.
    private func send(_ datagram: UnsafeRawBufferPointer, kind: DatagramKind) throws {
        try socket.send(try srtp?.protect(datagram, kind: kind) ?? datagram, to: configuration.remote)
    }

    private func drawReportInterval() -> Int64 {
        Int64(configuration.rtcpIntervalSeconds * Double.random(in: 0.5...1.5, using: &generator) * 1e9)
    }

    private func sendReport() {
        let now = NTPTimestamp.now()
        let sender = sendPath.sender
        let senderInfo = sender.packetCount == 0 ? nil
            : RTCPSenderInfo(ntpTimestamp: now, rtpTimestamp: sender.nextTimestamp, packetCount: sender.packetCount,
                             octetCount: sender.octetCount)
        var blocks: [RTCPReportBlock] = []
        if reception != nil { blocks.append(reception!.makeReportBlock(now: now)) }
        let report = RTCPReport(ssrc: sender.ssrc, senderInfo: senderInfo, blocks: blocks)
        guard let byteCount = report.write(cname: configuration.cname, into: reportBuffer) else { return }
        do {
            try send(UnsafeRawBufferPointer(rebasing: reportBuffer[..<byteCount]), kind: .rtcp)
            statistics.rtcpSent += 1
        } catch {
            statistics.sendErrors += 1
        }
    }

    // MARK: Receiving

    private func judge(_ datagram: UDPSocket.Datagram) {
        guard datagram.source == configuration.remote else { return drop(.wrongSource) }
        guard !datagram.wasTruncated else { return drop(.oversized) }
        var byteCount = datagram.byteCount
        let kind = DatagramKind(classifying: UnsafeRawBufferPointer(rebasing: buffer[..<byteCount]))
        if let srtp, kind != .runt {
            do { byteCount = try srtp.unprotect(buffer, byteCount: byteCount, kind: kind) } catch {
                return drop(.srtp(error))
            }
        }
        let bytes = UnsafeRawBufferPointer(rebasing: buffer[..<byteCount])
        switch kind {
        case .runt: drop(.runt)
        case .rtp: receiveRTP(bytes)
        case .rtcp: receiveRTCP(bytes)
        }
    }

    private func receiveRTP(_ bytes: UnsafeRawBufferPointer) {
        let packet: RTPPacket
        do { packet = try RTPPacket.parse(bytes, expectedPayloadType: configuration.receivedPayloadType) } catch {
            return drop(.malformedRTP(error))
        }
        let arrival = MonotonicClock.rtpTicks()
        let header = packet.header
        switch filter.admit(header, payload: packet.payload, arrivalTicks: arrival) {
        case .foreign:
            return drop(.foreignSSRC)
        case .probation:
            return drop(.sourceOnProbation)
        case .accept(let isNewSource):
            if isNewSource {
                if reception != nil { statistics.sourceTakeovers += 1 }
                reception = RTPReceptionStatistics(ssrc: header.ssrc, sequenceNumber: header.sequenceNumber,
                                                   timestamp: header.timestamp, arrivalTicks: arrival)
                statistics.remoteSSRC = header.ssrc
            } else {
                reception?.record(sequenceNumber: header.sequenceNumber, timestamp: header.timestamp, arrivalTicks: arrival)
            }
        }
        guard playout.incoming.enqueue(bytes, ticks: arrival) else { return drop(.queueFull) }
        statistics.packetsReceived += 1
    }

    private func receiveRTCP(_ bytes: UnsafeRawBufferPointer) {
        let report: RTCPReport
        do { report = try RTCPReport.parse(bytes) } catch {
            return drop(.malformedRTCP(error))
        }
        guard filter.acceptsReport(from: report.ssrc) else { return drop(.foreignSSRC) }
        let arrival = NTPTimestamp.now()
        statistics.rtcpReceived += 1
        if let info = report.senderInfo, reception?.ssrc == report.ssrc {
            reception?.noteSenderReport(info, arrivedAt: arrival)
        }
        guard let block = report.blocks.first(where: { $0.ssrc == sendPath.sender.ssrc }) else { return }
        statistics.remoteLossPercent = Double(block.fractionLost) * 100 / 256
        statistics.remoteJitterMilliseconds = Double(block.jitterTicks) * 1000 / Double(OpusFormat.rtpClockRate)
        if let seconds = block.roundTripSeconds(arrivedAt: arrival) { statistics.roundTripMilliseconds = seconds * 1000 }
        if configuration.inbandFEC {
            try? sendPath.encoder.setExpectedPacketLoss(percent: max(Int(block.fractionLost) * 100 / 256, 5))
        }
    }

    private func drop(_ reason: CallDropReason) {
        statistics.dropped[reason, default: 0] += 1
    }

    // MARK: Publishing

    private func publish() {
        var latest = JitterBufferStatistics()
        var hasReport = false
        withUnsafeMutablePointer(to: &latest) { pointer in
            while playout.reports.read(into: UnsafeMutableBufferPointer(start: pointer, count: 1)) == 1 { hasReport = true }
        }
        if hasReport { statistics.jitterBuffer = latest }
        if let reception {
            statistics.packetsLost = reception.cumulativeLost
            statistics.jitterMilliseconds = reception.jitterTicks * 1000 / Double(OpusFormat.rtpClockRate)
        }
        statistics.captureOverflowFrames = shared.captureOverflowFrames.load(ordering: .relaxed)
        let snapshot = statistics
        shared.published.withLock { $0 = snapshot }
    }
}
