/// The simulated room's near-end voice over a call: the talker's recording repeated (a second's pause between
/// repetitions) and, with turns, cut into TALK seconds of voice followed by PAUSE seconds of silence, as in a
/// talk-back conversation where the other side answers in the pauses.
struct TalkerSchedule {
    let voice: [Float]
    let sampleRate: Int
    let turn: (talkSeconds: Double, pauseSeconds: Double)?

    /// At least `durationSeconds` of near-end signal (the recording once when the duration is 0).
    func samples(durationSeconds: Double) -> [Float] {
        let wanted = max(Int(durationSeconds * Double(sampleRate)), voice.count)
        let pause = [Float](repeating: 0, count: sampleRate)
        var repeated = voice
        guard let turn else {
            while repeated.count < wanted { repeated += pause + voice }
            return repeated
        }
        let talkFrames = Int(turn.talkSeconds * Double(sampleRate))
        let pauseFrames = Int(turn.pauseSeconds * Double(sampleRate))
        var result: [Float] = []
        result.reserveCapacity(wanted + talkFrames + pauseFrames)
        var position = 0
        while result.count < wanted {
            while repeated.count < position + talkFrames { repeated += pause + voice }
            result += repeated[position..<(position + talkFrames)]
            result += [Float](repeating: 0, count: pauseFrames)
            position += talkFrames
        }
        return result
    }
}
