import Glibc

/// Lowers "other audio" (app sounds) while voice is playing or being captured, with ramps instead of steps.
///
/// The gain moves in decibels at a bounded rate: attenuating by the ducking depth takes `attackMilliseconds`,
/// coming back takes `releaseMilliseconds`, so no sample-to-sample gain step exceeds `depth / rampFrames` dB
/// (the depth being the last ducking level set, which still paces the release after ducking is switched off). Voice
/// activity is held for `holdMilliseconds` after it stops so the gain does not flutter between words.
/// `process` is real-time safe; one thread at a time.
public final class Ducker {
    public let sampleRate: Int
    public let attackMilliseconds: Double
    public let releaseMilliseconds: Double
    public let holdMilliseconds: Double
    /// Gain applied to the last frame processed, in dB (0 = untouched).
    public private(set) var gainDB: Float = 0
    private var holdFramesLeft = 0
    /// The ramps' full range: the last ducking level set, in dB (positive).
    private var depthDB: Float = 1

    public init(sampleRate: Int, attackMilliseconds: Double = 40, releaseMilliseconds: Double = 300,
                holdMilliseconds: Double = 400) {
        self.sampleRate = sampleRate
        self.attackMilliseconds = attackMilliseconds
        self.releaseMilliseconds = releaseMilliseconds
        self.holdMilliseconds = holdMilliseconds
    }

    /// Whether the gain is currently below unity.
    public var isDucking: Bool { gainDB < -0.01 }

    /// Scales `block` in place towards `levelDB` (≤ 0) when `isActive` (or within the hold time after it), else
    /// back towards 0 dB; a `levelDB` of 0 (ducking off) releases at once, without the hold. Real-time safe.
    public func process(_ block: UnsafeMutableBufferPointer<Float>, levelDB: Float, isActive: Bool) {
        if levelDB < 0 { depthDB = max(-levelDB, 1) }
        let depth = depthDB
        if isActive {
            holdFramesLeft = Int(holdMilliseconds * Double(sampleRate) / 1000)
        } else {
            holdFramesLeft = max(holdFramesLeft - block.count, 0)
        }
        let target: Float = levelDB < 0 && (isActive || holdFramesLeft > 0) ? levelDB : 0
        let attackStepDB = depth / Float(max(attackMilliseconds * Double(sampleRate) / 1000, 1))
        let releaseStepDB = depth / Float(max(releaseMilliseconds * Double(sampleRate) / 1000, 1))
        var gain = gainDB
        for index in block.indices {
            if gain > target {
                gain = max(gain - attackStepDB, target)
            } else if gain < target {
                gain = min(gain + releaseStepDB, target)
            }
            if gain != 0 { block[index] *= Self.amplitude(decibels: gain) }
        }
        gainDB = gain
    }

    /// Back to unity gain with no hold pending. Real-time safe.
    public func reset() {
        gainDB = 0
        holdFramesLeft = 0
    }

    @inline(__always) static func amplitude(decibels: Float) -> Float {
        exp(decibels * 0.115_129_25)  // ln(10) / 20
    }
}
