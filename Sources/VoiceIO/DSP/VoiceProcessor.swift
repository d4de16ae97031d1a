/// One stage that turns a block of microphone frames into processed voice, given the delay-aligned echo
/// reference of the same block, all at the voice rate, full scale ±1.
///
/// Two stages exist: `EchoPipeline` (echo cancellation, noise and residual-echo suppression, gain control) and
/// its pass-through twin `PassThroughProcessor`, which bypass swaps in. Callers hold concrete types so the
/// real-time path never calls through an existential.
public protocol VoiceProcessor: AnyObject {
    /// Frames per block, fixed at creation.
    var blockFrameCount: Int { get }
    /// Processes one block of `blockFrameCount` frames; returns whether near-end voice was detected.
    /// Real-time safe.
    func process(microphone: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>,
                 output: UnsafeMutableBufferPointer<Float>) -> Bool
}

/// Bypass: the microphone block unchanged. Voice activity is a level threshold on the microphone.
public final class PassThroughProcessor: VoiceProcessor {
    public let blockFrameCount: Int
    /// RMS level above which the microphone counts as voice, in dBFS.
    public let activityThresholdDBFS: Float

    public init(blockFrameCount: Int, activityThresholdDBFS: Float = -45) {
        self.blockFrameCount = blockFrameCount
        self.activityThresholdDBFS = activityThresholdDBFS
    }

    /// Real-time safe.
    public func process(microphone: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>,
                        output: UnsafeMutableBufferPointer<Float>) -> Bool {
        let count = min(microphone.count, output.count)
        guard count > 0, let source = microphone.baseAddress, let destination = output.baseAddress else { return false }
        destination.update(from: source, count: count)
        return LevelMeter.measure(microphone).rmsDBFS > activityThresholdDBFS
    }
}
