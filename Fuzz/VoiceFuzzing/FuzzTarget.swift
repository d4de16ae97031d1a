/// The fuzz targets: each feeds arbitrary bytes to one entry point that takes untrusted input (files, datagrams,
/// packet sequences) and checks what must hold whatever the bytes are. A memory error, a trap or a failed check
/// is a crash. `Fuzz/Harness` runs them under libFuzzer (`scripts/fuzz`); `FuzzRegressionTests` replays the
/// committed corpora and crash inputs through the same `run`.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// Any bytes as an audio file opened and read through `AudioFileReader`.
    case audioFile = "audio-file"
    /// Any bytes as an RTP datagram: classify, parse, and re-serialise what parsed.
    case rtp
    /// Any bytes as a compound RTCP datagram: parse, and re-serialise what parsed.
    case rtcp
    /// Bytes decoded into a sequence of pushes, pulls and clock steps on a `JitterBuffer`.
    case jitterBuffer = "jitter-buffer"
    /// Bytes cut into Opus payloads decoded, recovered and concealed by one `OpusDecoder`.
    case opusDecode = "opus-decode"
    /// Any bytes as a session description read by `PeerDescription`, and what parsed written back and re-read.
    case sdp
    /// Any bytes through the SRTP receive path (`SRTPContext`), raw or as a protected and tampered packet.
    case srtpUnprotect = "srtp-unprotect"

    /// Runs one input; traps when a check fails. Not real-time safe.
    public func run(_ input: UnsafeRawBufferPointer) {
        switch self {
        case .audioFile: AudioFileFuzzing.run(input)
        case .rtp: RTPFuzzing.run(input)
        case .rtcp: RTCPFuzzing.run(input)
        case .jitterBuffer: JitterBufferFuzzing.run(input)
        case .opusDecode: OpusDecodeFuzzing.run(input)
        case .sdp: SDPFuzzing.run(input)
        case .srtpUnprotect: SRTPUnprotectFuzzing.run(input)
        }
    }
}
