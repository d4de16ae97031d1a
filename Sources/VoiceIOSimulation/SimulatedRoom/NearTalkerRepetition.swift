import VoiceIO

/// How the simulated room repeats its near-end talker's recording for as long as it runs, from the one copy in
/// `SimulatedRoomConfiguration.nearTalker` (no signal is expanded in memory, however long the run): the
/// recording, `gapFrames` of silence, the recording again, and so on; with talk turns that stream is cut into
/// `talkFrames` of voice each followed by `pauseFrames` of silence, as in a talk-back conversation where the
/// other side answers in the pauses.
public struct NearTalkerRepetition: Sendable, Hashable {
    /// Silence between two repetitions of the recording, in frames (at the recording's rate, as all three are).
    public var gapFrames: Int
    /// Frames of voice per talk turn (0: no turns, the repeated recording runs on).
    public var talkFrames: Int
    /// Frames of silence after each talk turn (ignored without turns).
    public var pauseFrames: Int

    public init(gapFrames: Int, talkFrames: Int = 0, pauseFrames: Int = 0) {
        self.gapFrames = max(gapFrames, 0)
        self.talkFrames = max(talkFrames, 0)
        self.pauseFrames = max(pauseFrames, 0)
    }

    /// The frame of a `recordingFrameCount`-frame recording heard at `talkerFrame` frames after the talker
    /// started, or nil for silence. Real-time safe (integer arithmetic only).
    public func recordingFrame(at talkerFrame: Int, recordingFrameCount: Int) -> Int? {
        guard talkerFrame >= 0, recordingFrameCount > 0 else { return nil }
        var streamFrame = talkerFrame
        if talkFrames > 0 {
            let turnFrames = talkFrames + pauseFrames
            let offset = talkerFrame % turnFrames
            guard offset < talkFrames else { return nil }
            streamFrame = talkerFrame / turnFrames * talkFrames + offset
        }
        let frame = streamFrame % (recordingFrameCount + gapFrames)
        return frame < recordingFrameCount ? frame : nil
    }
}
