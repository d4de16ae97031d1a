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
/// real-time thread once per voice block; must be real-time safe.
public typealias VoiceRenderCallback = (_ frames: VoiceFrames) -> Void

/// Tells the app that processed microphone frames are ready (`availableFrameCount` of them); the app pulls them
/// with `VoiceProcessingIO.readInput(into:)`, from the callback or from one other thread. Called on the real-time
/// thread once per device period; must be real-time safe.
public typealias VoiceInputCallback = (_ availableFrameCount: Int) -> Void

/// Adds device-rate mono other audio into `frames` (an audio graph's mix). Called on the real-time thread; must be
/// real-time safe.
typealias OtherAudioRenderer = (_ frames: UnsafeMutableBufferPointer<Float>) -> Void
