/// How much of the jitter buffer's delay above its target to remove smoothly during playout, and from what.
///
/// At every packet decode the buffer reports the audio ahead of playout (the packet about to play included) plus
/// the time the newest packet has waited: how long that packet stays in the buffer, which the target bounds.
/// Over each window of `windowMilliseconds` of decoded audio the controller keeps the smallest such level: in
/// steady playout it dips to about the target once per packet, so a minimum above the target is lasting excess,
/// not the saw-tooth of arrivals. That excess (`surplusFrameCount`) is then removed where it is least audible:
/// - silent or DTX frames are shortened outright (all of their frames may go);
/// - speech is time-compressed by whole pitch periods, at most `maxSpeechShare` of its frames, and only once the
///   excess reaches `speechThresholdMilliseconds` (a smaller one waits for the next pause).
///
/// Excess that piles up while nothing is consumed is not this controller's: the buffer skips it at once when
/// playout resumes. Real-time safe: plain values, no allocation.
struct LatencyController {
    static let windowMilliseconds = 60
    static let speechThresholdMilliseconds = 10
    /// At most this share of a speech stretch is removed (it plays at most 1.5 times as fast).
    static let maxSpeechShare = 1.0 / 3
    /// RMS below which a decoded frame counts as silence (−45 dBFS).
    static let silenceRMS: Float = 0.0056

    let windowFrameCount: Int
    let speechThresholdFrameCount: Int
    private var windowDecodedFrameCount = 0
    private var windowMinimum = Int.max
    /// Excess over the target still to remove, in frames.
    private(set) var surplusFrameCount = 0

    init(sampleRate: Int) {
        windowFrameCount = sampleRate * Self.windowMilliseconds / 1000
        speechThresholdFrameCount = sampleRate * Self.speechThresholdMilliseconds / 1000
    }

    /// Called before each packet is decoded with the level then. An excess below `toleranceFrameCount` (the
    /// puller's block: decoding happens at pulls, so the level at a decode lies anywhere within one block above
    /// the target) is left alone; a larger one is removed down to half the tolerance above the target, so
    /// removing it cannot make the next pull run dry.
    mutating func observe(aheadFrameCount: Int, targetFrameCount: Int, decodedFrameCount: Int, toleranceFrameCount: Int) {
        windowMinimum = min(windowMinimum, aheadFrameCount)
        windowDecodedFrameCount += decodedFrameCount
        guard windowDecodedFrameCount >= windowFrameCount else { return }
        let excess = windowMinimum - targetFrameCount
        surplusFrameCount = excess >= toleranceFrameCount ? excess - toleranceFrameCount / 2 : 0
        windowDecodedFrameCount = 0
        windowMinimum = .max
    }

    /// Frames that may be dropped from a silent frame of `frameCount`.
    func silenceRemoval(frameCount: Int) -> Int { min(surplusFrameCount, frameCount) }

    /// Frames that may be removed from a speech stretch of `frameCount` by time compression (0 below the
    /// threshold).
    func speechRemoval(frameCount: Int) -> Int {
        guard surplusFrameCount >= speechThresholdFrameCount else { return 0 }
        return min(surplusFrameCount, Int(Double(frameCount) * Self.maxSpeechShare))
    }

    mutating func removed(_ frameCount: Int) {
        surplusFrameCount = max(surplusFrameCount - frameCount, 0)
    }

    /// Forgets the window and any surplus (after a skip, a restart or a new stream).
    mutating func reset() {
        windowDecodedFrameCount = 0
        windowMinimum = .max
        surplusFrameCount = 0
    }

    static func isSilent(_ frames: UnsafeMutableBufferPointer<Float>) -> Bool {
        guard !frames.isEmpty else { return true }
        var sum: Float = 0
        for sample in frames { sum += sample * sample }
        return sum / Float(frames.count) < silenceRMS * silenceRMS
    }
}
