/// One of a call's recordings and, for the device-side ones, where its first frame sits in time.
public struct CallRecording: Sendable, Hashable, Codable {
    /// "microphone" (raw, device rate), "loudspeaker" (device rate), "sent" (processed microphone, voice rate)
    /// or "far end" (received voice, voice rate).
    public var role: String
    public var path: String
    public var sampleRate: Int
    public var frames: Int
    public var droppedFrames: Int
    /// When frame 0 was at the microphone or loudspeaker, in seconds of CLOCK_MONOTONIC (nil when unknown or not
    /// tied to the device's clock): puts two peers' recordings on one time base (`voicepeer compare`).
    public var firstFrameSeconds: Double?
    /// The device-side recordings' timeline (`RecordingTimeline`): when each period's frames happened, so that
    /// frames late in a long call sit at their own time, not frame ÷ nominal rate after frame 0.
    public var timelinePath: String?

    /// Reads `recorder`. `deviceOffsetFrames`, for device-side recordings: from the moment the recorder first got
    /// frames to the moment its first frame was at the microphone or the loudspeaker, in frames (negative for
    /// capture: the period was heard before it was delivered). Not real-time safe.
    init(role: String, recorder: StreamRecorder, deviceOffsetFrames: Int? = nil) {
        self.role = role
        path = recorder.path
        sampleRate = recorder.sampleRate
        frames = recorder.framesWritten
        droppedFrames = recorder.droppedFrameCount
        timelinePath = recorder.timelinePath
        if let deviceOffsetFrames, let nanoseconds = recorder.firstAppendNanoseconds {
            firstFrameSeconds = Double(nanoseconds) / 1e9 + Double(deviceOffsetFrames) / Double(recorder.sampleRate)
        }
    }
}

/// Where a call endpoint records (nil: not recorded).
public struct CallRecordingPaths: Sendable, Hashable {
    /// The processed microphone as sent (WAV, voice rate); bypass toggles go to `sent + ".events"`.
    public var sent: String?
    /// The raw microphone (WAV, device rate), with its timeline at `microphone + ".timeline"`.
    public var microphone: String?
    /// The received far-end voice (WAV, voice rate).
    public var farEnd: String?
    /// What the loudspeaker plays (WAV, device rate), with its timeline at `loudspeaker + ".timeline"`.
    public var loudspeaker: String?

    public init(sent: String? = nil, microphone: String? = nil, farEnd: String? = nil, loudspeaker: String? = nil) {
        self.sent = sent
        self.microphone = microphone
        self.farEnd = farEnd
        self.loudspeaker = loudspeaker
    }

    /// The bypass events file beside `sent`.
    public var events: String? { sent.map { $0 + ".events" } }
}
