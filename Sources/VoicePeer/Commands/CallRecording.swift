import VoiceCall

/// One of `voicepeer call`'s recordings and, for the device-side ones, where its first frame sits in time.
struct CallRecording {
    let role: String
    let recorder: StreamRecorder
    /// For device-side recordings: from the moment the recorder first got frames to the moment its first frame
    /// was at the microphone or the loudspeaker, in frames (negative for capture: the period was heard before
    /// it was delivered). Nil for recordings not tied to the device's clock.
    let deviceOffsetFrames: Int?

    init?(role: String, recorder: StreamRecorder?, deviceOffsetFrames: Int? = nil) {
        guard let recorder else { return nil }
        self.role = role
        self.recorder = recorder
        self.deviceOffsetFrames = deviceOffsetFrames
    }

    /// When frame 0 was at the microphone or loudspeaker, in seconds of CLOCK_MONOTONIC (nil when unknown).
    var firstFrameSeconds: Double? {
        guard let deviceOffsetFrames, let nanoseconds = recorder.firstAppendNanoseconds else { return nil }
        return Double(nanoseconds) / 1e9 + Double(deviceOffsetFrames) / Double(recorder.sampleRate)
    }
}
