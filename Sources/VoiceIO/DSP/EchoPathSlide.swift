#if canImport(Glibc)
import Glibc
#endif

/// Measures the clock drift the aligner leaves uncompensated from the linear filter itself: an echo whose delay still
/// drifts slides along the filter's taps, and a filter that follows it moves its impulse response by as much
/// (`EchoCanceller.shiftSinceSnapshot`). The delay estimator's arrival, which the drift's line is fitted to, wanders
/// between reflections by a tenth of a millisecond; the filter's whole response moves by a hundredth of a frame.
///
/// Every `intervalSeconds` it compares the filter with itself an interval earlier. The comparison counts only when the
/// filter followed the echo through both intervals (the far end playing in `minimumFarEndShare` of the blocks, no near
/// talker heard, `minimumLinearERLEDB` or more taken off the microphone, no reset), when the two responses are alike
/// but for the move (`minimumSimilarity`: a path that moved changes its shape), and when the far end spread the reading
/// over the band (`minimumSpread`: the phase of a tone's one or two bins tells no delay). The move over the interval is
/// the residual drift (`residualDriftPPM`, counted in `measurementCount`); the interval after a measurement only
/// settles (the filter still follows the drift compensated before the reader's correction).
///
/// `observe` is real-time safe.
struct EchoPathSlide {
    /// The last residual drift measured, in ppm (positive: the echo's delay still shrinks); 0 before the first.
    private(set) var residualDriftPPM: Double = 0
    /// Measurements so far: a reader compares it with the count it last saw.
    private(set) var measurementCount = 0

    private static var intervalSeconds: Double { 0.5 }
    /// Far-end blocks per interval, at least: in a pause the filter stops following, and catches up after it. The share
    /// was set on 10 ms blocks, which miss about 10 ms of each silence (the blocks it fills only in part); a call's
    /// 5 ms blocks, which miss about 5, read the same far end as silent for longer, and most of the intervals of our
    /// drift-change d04 (300 ppm, read as 261) fell under the share at 5 ms that met it at 10 ms (89 % against 90 %):
    /// the residual went unmeasured, the filter took 12-16 dB off before the double talk, not 18-29, and the talker's
    /// STOI was 0.832 against 0.979. So a silence counts only from its `BlockRate.blocksPerTunedBlock`-th block on.
    private static var minimumFarEndShare: Double { 0.9 }
    /// A filter misaligned by the drift takes 3-6 dB off (our drift-change scene d02, 250 ppm read as 134): it is
    /// following all the same. With no threshold the hot-microphone g08 (9 % clipped) read 67 ppm off.
    private static var minimumLinearERLEDB: Double { 2 }
    private static var minimumSimilarity: Float { 0.8 }
    /// The share of the bins the reading must spread over: one or two tones from the start read 0.1-0.4 (a 1 kHz tone
    /// under 300 ppm read 10-15 ppm, two tones 73-108 ppm), speech 0.5-0.95 (our test fixture's 0.5-0.6, the
    /// yardstick's 0.7-0.95), music 0.7-0.8. (A tone after speech reads the whole response learned before, unmoved:
    /// a residual of 0.)
    private static var minimumSpread: Float { 0.45 }
    /// The highest frequency whose phase is read: a move of up to 1 / (2 · 3 kHz) per interval (333 ppm) is
    /// unambiguous.
    private static var highestHertz: Double { 3000 }
    private static var minimumERLERatio: Float { Float(pow(10, minimumLinearERLEDB / 10)) }
    private let intervalFrames: Int
    private let intervalBlocks: Int
    private let shortestPauseBlocks: Int
    private var blocks = 0, pauseBlocks = 0, silentBlocks = 0
    private var microphonePower: Float = 0, errorPower: Float = 0
    private var isTalkerHeard = false
    private var hasSnapshot = false
    /// Whether the filter followed the echo through the last interval, which ended at the snapshot.
    private var wasFollowing = false

    init(sampleRate: Int, blockFrameCount: Int) {
        intervalBlocks = max(1, Int(Self.intervalSeconds * Double(sampleRate)) / blockFrameCount)
        intervalFrames = intervalBlocks * blockFrameCount
        let rate = BlockRate(blocksPerSecond: Double(sampleRate) / Double(blockFrameCount))
        shortestPauseBlocks = rate.blocksPerTunedBlock
    }

    /// Forgets the snapshot: the filter started over. Real-time safe.
    mutating func restart() {
        hasSnapshot = false
        wasFollowing = false
        startInterval()
    }

    /// One block of the filter's work: whether the far end played and a near talker was heard, and the power of the
    /// microphone the filter saw and of its output. Real-time safe.
    mutating func observe(_ canceller: EchoCanceller, farEndActive: Bool, isTalkerHeard talker: Bool,
                          microphonePower: Float, errorPower: Float) {
        blocks += 1
        if farEndActive {
            silentBlocks = 0
            self.microphonePower += microphonePower
            self.errorPower += errorPower
        } else {
            silentBlocks += 1
            if silentBlocks >= shortestPauseBlocks { pauseBlocks += 1 }
        }
        isTalkerHeard = isTalkerHeard || talker
        guard blocks >= intervalBlocks else { return }
        let following = !isTalkerHeard && Double(blocks - pauseBlocks) >= Self.minimumFarEndShare * Double(blocks)
            && self.microphonePower > Self.minimumERLERatio * self.errorPower
        var measured = false
        if following && wasFollowing && hasSnapshot {
            let move = canceller.shiftSinceSnapshot(highestHertz: Self.highestHertz)
            if move.similarity >= Self.minimumSimilarity && move.spread >= Self.minimumSpread {
                // A response that moved later: the echo's delay grew, a drift the compensation overstates.
                residualDriftPPM = -Double(move.frames) / Double(intervalFrames) * 1e6
                measurementCount += 1
                measured = true
            }
        }
        canceller.takeWeightSnapshot()
        hasSnapshot = true
        wasFollowing = following && !measured
        startInterval()
    }

    private mutating func startInterval() {
        blocks = 0; pauseBlocks = 0
        microphonePower = 0; errorPower = 0
        isTalkerHeard = false
    }
}
