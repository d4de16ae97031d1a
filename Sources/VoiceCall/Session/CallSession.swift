import Synchronization
import VoiceIO

/// One side of a talk-back call: Opus over RTP (RFC 3550, RFC 7587) with RTCP multiplexed on the same port
/// (RFC 5761), between an audio side that runs on the real-time thread and a network thread of its own.
///
/// ```
///            real-time thread                 │                 network thread
///  sendCaptured(voice) ─► capture ring (PCM) ─┼─► [resample] ─► Opus encode ─► RTP ─► socket.send ──► remote
///                                             │
///  renderReceived ◄─ [resample] ◄─ JitterBuffer ◄─ DatagramQueue ◄─┼─ filter (address, port, SSRC) ◄─ socket.receive
///      (decode, FEC, PLC on this thread)       └─► stats ring ──────┼─► CallStatistics (Mutex) ◄─ RTCP SR/RR every ~2.5 s
/// ```
///
/// Where encoding happens: on the network thread. The audio thread only copies PCM into a ring, so its cost
/// per period is constant and tiny (an Opus frame takes a few hundred microseconds to encode, and only every
/// second 10 ms period would pay it); the encoder, the RTP sender state and the socket then have one owner,
/// which also reads the remote's loss reports to tune FEC and fills RTCP sender reports without sharing
/// anything. The network thread does not poll: it sleeps in the socket's wait until a datagram comes, an RTCP
/// report is due, or the next whole frame of captured voice is due (from the capture queue's fill, the voice
/// rate and when the audio thread last queued voice), so it wakes about once per frame sent and once per packet
/// received, and a frame waits for it only its wake-up latency.
/// Decoding stays on the audio thread: the jitter buffer decides between decode, FEC and concealment at the
/// moment audio is due.
///
/// Life cycle: `init` (binds, allocates) → `start` → `stop` (joins within a poll interval; never hangs).
/// `sendCaptured` and `renderReceived` are real-time safe (no allocation, lock or system call) and each must be
/// called from one thread at a time; the other members are for ordinary threads.
public final class CallSession: @unchecked Sendable {
    public let configuration: CallConfiguration
    /// Where this session receives (and sends from).
    public var localAddress: SocketAddress { socket.localAddress }
    /// The codec's algorithmic delay, in frames at the codec rate.
    public var encoderLookaheadFrameCount: Int { sendPath.encoder.lookaheadFrameCount }

    private let socket: UDPSocket
    private let sendPath: SendPath
    private let playout: PlayoutPath
    private let shared = SharedCallState()
    private let thread: RepeatingThread

    /// Builds a session on an already bound socket (tests bind port 0 first to learn the address).
    /// Not real-time safe.
    public init(socket: UDPSocket, configuration: CallConfiguration) throws(CallError) {
        guard StreamFormat.voiceRates.contains(configuration.voiceRate) else {
            throw .unsupportedVoiceRate(hertz: configuration.voiceRate)
        }
        self.configuration = configuration
        self.socket = socket
        sendPath = try SendPath(configuration: configuration)
        playout = try PlayoutPath(configuration: configuration)
        let srtp: SRTPTransport?
        do { srtp = try configuration.srtp.map { keys throws(SRTPError) in try SRTPTransport(keys: keys) } } catch {
            throw .srtp(error)
        }
        let loop = NetworkLoop(configuration: configuration, socket: socket, sendPath: sendPath, playout: playout,
                               shared: shared, srtp: srtp)
        thread = RepeatingThread(name: "call-network") { loop.iterate() }
        shared.published.withLock { $0.localSSRC = sendPath.sender.ssrc }
    }

    /// Binds `listen` ("HOST:PORT") and builds the session. Not real-time safe.
    public convenience init(listen: SocketAddress, configuration: CallConfiguration) throws(CallError) {
        let socket: UDPSocket
        do { socket = try UDPSocket(bindingTo: listen) } catch { throw .socket(error) }
        try self.init(socket: socket, configuration: configuration)
    }

    deinit { thread.stop() }

    /// Starts the network thread. Not real-time safe.
    public func start() throws(CallError) {
        do { try thread.start() } catch { throw .threadFailed(error) }
    }

    /// Stops the network thread and waits for it (at most `idleWaitMilliseconds`). Not real-time safe.
    public func stop() { thread.stop() }

    /// Queues processed microphone voice (mono, at the voice rate) for sending; frames that do not fit are
    /// dropped and counted. Real-time safe (it reads CLOCK_MONOTONIC, a vDSO call: no kernel entry, no lock);
    /// call from one thread (the audio thread).
    public func sendCaptured(_ frames: UnsafeBufferPointer<Float>) {
        let written = sendPath.capture.write(frames)
        if written < frames.count { shared.captureOverflowFrames.add(frames.count - written, ordering: .relaxed) }
        shared.lastCaptureNanoseconds.store(MonotonicClock.nanoseconds(), ordering: .releasing)
    }

    /// Fills all of `frames` with the far end's voice (mono, at the voice rate): decoded, recovered from FEC,
    /// concealed, or silence before anything arrives. Real-time safe; call from one thread (the audio thread).
    public func renderReceived(into frames: UnsafeMutableBufferPointer<Float>) {
        playout.render(into: frames)
    }

    /// Time the audio thread spent in `renderReceived` so far (jitter buffer, Opus decoding, conversion), in
    /// nanoseconds of CLOCK_MONOTONIC: the call's share of the audio thread. Any thread.
    public var playoutNanoseconds: Int64 { playout.renderNanoseconds }

    /// The latest statistics the network thread published (it does so after every wake-up, about every 10 ms).
    public var statistics: CallStatistics { shared.published.withLock { $0 } }
}
