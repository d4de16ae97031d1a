import Glibc

/// Lowers "other audio" (app sounds) while voice is playing or being captured, with ramps instead of steps.
///
/// The gain moves in decibels at a bounded rate: attenuating by `depth` dB takes `attackMilliseconds`, coming
/// back takes `releaseMilliseconds`, so no sample-to-sample gain step exceeds `depth / rampFrames` dB. Voice
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
    /// back towards 0 dB. Real-time safe.
    public func process(_ block: UnsafeMutableBufferPointer<Float>, levelDB: Float, isActive: Bool) {
        let depth = max(-levelDB, 1)
        if isActive {
            holdFramesLeft = Int(holdMilliseconds * Double(sampleRate) / 1000)
        } else {
            holdFramesLeft = max(holdFramesLeft - block.count, 0)
        }
        let target: Float = (isActive || holdFramesLeft > 0) ? min(levelDB, 0) : 0
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
