import VoiceIO

/// Keeps what a simulated room played and heard, in storage allocated up front. `append` is real-time safe and
/// stops quietly when full.
final class RoomRecorder {
    private var loudspeaker: [Float]
    private var microphone: [Float]
    private var count = 0

    init(capacityFrames: Int) {
        loudspeaker = [Float](repeating: 0, count: max(capacityFrames, 0))
        microphone = [Float](repeating: 0, count: max(capacityFrames, 0))
    }

    func append(loudspeaker played: UnsafeBufferPointer<Float>, microphone heard: UnsafeBufferPointer<Float>) {
        let frames = min(played.count, heard.count, loudspeaker.count - count)
        guard frames > 0 else { return }
        loudspeaker.withUnsafeMutableBufferPointer { ($0.baseAddress! + count).update(from: played.baseAddress!, count: frames) }
        microphone.withUnsafeMutableBufferPointer { ($0.baseAddress! + count).update(from: heard.baseAddress!, count: frames) }
        count += frames
    }

    func contents() -> (loudspeaker: [Float], microphone: [Float]) {
        (Array(loudspeaker[..<count]), Array(microphone[..<count]))
    }
}
