/// Tells a path that moved while a near talker talks, for `BlockAdaptiveFilter`'s shadow, where comparing the two
/// filters' errors cannot: the talker fills both (neither filter can predict them), so the shadow never gets the 6 dB
/// under the foreground that `BlockAdaptiveFilter.judgeShadow` asks for, and the misadjustment monitor restarts the
/// filter from nothing only 0.6-0.7 s after the move (our dt-change t01: the echo 0-3 dB down for the next 2 s of
/// double talk; late-dt-change u06: 18 dB in the far-end stretch after it).
///
/// Two differences leave the talker out. The foreground's error energy less the shadow's, over the energy of the
/// difference between their echo estimates: the talker is in both errors and in neither estimate, so it cancels out
/// of the first (on average) and is absent from the second. The ratio is near 1 when the shadow has the echo and the
/// foreground does not, below 0 when the foreground is the better (the shadow pulled by the talker: −1 in t01's double
/// talk before the move, 0.7-1.1 within 0.1 s after it). And the microphone's energy less the foreground's error, over
/// its echo estimate's energy: near 1 for a foreground that cancels, at or below 0 for one whose estimate is of a path
/// gone (it adds as much as it takes away: −0.1 to −0.2 after t01's move). A talker's onset moves neither, but a
/// foreground that lags a drifting path lets the shadow look better at it (dt-change t04, 300 ppm: 1.1-3.4 at the
/// onset), hence the second test.
///
/// So the shadow takes over when, for `runSeconds` of far-end blocks in a row, the foreground has lost the path
/// (`BlockAdaptiveFilter.hasLostPath`), a talker is heard and has been for a second (a path that moves in far-end
/// single talk is heard as a talker from the move on, and is left to the monitor, whose reset the suppressor needs:
/// our `changes` c03 re-converged in 2 s instead of 1 taken over here), the shadow has `shadowShare` of the
/// difference, and the foreground explains under `foregroundShare` of its estimate. Real-time safe.
struct TalkerPathMove {
    private var foregroundOverShadow: Float = 0, estimateDifference: Float = 0
    private var microphoneOverForeground: Float = 0, foregroundEstimate: Float = 0
    private var blocksInRow = 0
    private let smoothing: Float
    private let runBlocks: Int

    /// The time constant of the four averages.
    private static var smoothingSeconds: Double { 0.2 }
    /// How long the blocks that find the path moved must run.
    private static var runSeconds: Double { 0.1 }
    /// The share of the estimates' difference energy by which the shadow's error must stand under the foreground's.
    private static var shadowShare: Float { 0.5 }
    /// The share of its own estimate's energy under which the foreground's error must stand under the microphone's.
    /// At 0.5 the late-dt-change u06 move (0.53-0.59) was missed; at 0.9 the dt-change and late-dt-change scenes gave
    /// nearly the same figures as at 0.75 (t02's double-talk STOI 0.944 against 0.942).
    private static var foregroundShare: Float { 0.75 }

    init(rate: BlockRate) {
        smoothing = rate.smoothingWeight(seconds: Self.smoothingSeconds)
        runBlocks = max(1, rate.blocks(seconds: Self.runSeconds))
    }

    /// One block's energies: the microphone's (notched, pre-emphasised), the foreground's and the shadow's errors,
    /// the foreground's echo estimate and the difference between the two estimates; whether the foreground has lost
    /// the path (and counts as adapted), the far end plays, a talker is heard in this block and has been for a
    /// second. Returns whether the shadow takes over.
    mutating func observe(microphone: Float, foregroundError: Float, shadowError: Float, foregroundEstimate estimate: Float,
                          estimateDifference difference: Float, hasLostPath: Bool, farEndPlays: Bool,
                          isTalkerHeard: Bool, isTalkerHeardLong: Bool) -> Bool {
        foregroundOverShadow += smoothing * (foregroundError - shadowError - foregroundOverShadow)
        estimateDifference += smoothing * (difference - estimateDifference)
        microphoneOverForeground += smoothing * (microphone - foregroundError - microphoneOverForeground)
        foregroundEstimate += smoothing * (estimate - foregroundEstimate)
        let isMoved = hasLostPath && farEndPlays && isTalkerHeard && isTalkerHeardLong
            && foregroundOverShadow > Self.shadowShare * estimateDifference
            && microphoneOverForeground < Self.foregroundShare * foregroundEstimate
        blocksInRow = isMoved ? blocksInRow + 1 : 0
        return blocksInRow >= runBlocks
    }

    /// After the shadow took over (here or otherwise): the comparison of the two filters starts again.
    mutating func shadowTookOver() {
        foregroundOverShadow = 0
        estimateDifference = 0
        blocksInRow = 0
    }
}
