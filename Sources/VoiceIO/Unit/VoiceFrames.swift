/// A block of mono voice frames in the app's client sample type, lent to a callback for its duration.
public enum VoiceFrames {
    case float32(UnsafeMutableBufferPointer<Float>)
    case int16(UnsafeMutableBufferPointer<Int16>)

    public var frameCount: Int {
        switch self {
        case .float32(let frames): frames.count
        case .int16(let frames): frames.count
        }
    }
}

/// Asks the app for far-end voice to play: fill every frame (silence when there is nothing). Called on the
/// real-time thread about once per device period, for the frames that period needs at the voice rate (160 for a
/// 10 ms period at 16 kHz; 170 or 171 for PipeWire's 512 frames at 48 kHz; now and then a few more frames in a
/// second call); must be real-time safe.
public typealias VoiceRenderCallback = (_ frames: VoiceFrames) -> Void

/// Tells the app that processed microphone frames are ready (`availableFrameCount` of them); the app pulls them
/// with `VoiceProcessingIO.readInput(into:)`, from the callback or from one other thread. Called on the real-time
/// thread once per device period; must be real-time safe.
public typealias VoiceInputCallback = (_ availableFrameCount: Int) -> Void

/// Adds device-rate mono other audio into `frames` (an audio graph's mix). Called on the real-time thread; must be
/// real-time safe.
typealias OtherAudioRenderer = (_ frames: UnsafeMutableBufferPointer<Float>) -> Void
