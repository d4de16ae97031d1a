#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// Deterministic generated audio for tests and demos: sines, a speech-like talker and a synthetic echo path.
///
/// Everything here allocates arrays: not real-time safe. The same seed always gives the same samples.
public enum SyntheticAudio {
    /// `frameCount` frames of a sine of `frequency` Hz and peak `amplitude`, starting at `phase` radians.
    public static func sine(frequency: Double, sampleRate: Int, frameCount: Int, amplitude: Float = 1,
                            phase: Double = 0) -> [Float] {
        let step = 2 * Double.pi * frequency / Double(sampleRate)
        return (0..<frameCount).map { amplitude * Float(sin(phase + step * Double($0))) }
    }

    /// A speech-like talker: voiced syllables (a gliding pitch of 100–220 Hz with 1/k harmonics) mixed with
    /// noise bursts, shaped by about four syllables per second with pauses between phrases. Peak about `amplitude`.
    public static func speechLike(sampleRate: Int, frameCount: Int, amplitude: Float = 0.5, seed: UInt64 = 1) -> [Float] {
        var random = SplitMix64(seed: seed)
        var samples = [Float](repeating: 0, count: frameCount)
        let rate = Double(sampleRate)
        let harmonicCount = max(1, min(20, Int(rate / 2 / 250)))
        var frame = 0
        var phase = 0.0
        while frame < frameCount {
            let syllableFrames = Int(rate * (0.15 + 0.15 * random.unit()))
            let isPause = random.unit() < 0.15
            let pitch = 100 + 120 * random.unit()
            let glide = (random.unit() - 0.5) * 40
            let noiseShare = Float(random.unit() * 0.4)
            for offset in 0..<syllableFrames where frame + offset < frameCount {
                let progress = Double(offset) / Double(syllableFrames)
                let envelope = isPause ? 0 : Float(sin(Double.pi * progress))
                phase += 2 * Double.pi * (pitch + glide * progress) / rate
                var voiced = 0.0
                for k in 1...harmonicCount { voiced += sin(Double(k) * phase) / Double(k) }
                let noise = Float(random.unit() * 2 - 1)
                samples[frame + offset] = amplitude * envelope * ((1 - noiseShare) * Float(voiced) * 0.6 + noiseShare * noise)
            }
            frame += syllableFrames
        }
        return samples
    }

    /// Impulse response of a synthetic room: `delayMilliseconds` of silence, then `tailMilliseconds` of noise
    /// taps decaying by 60 dB over the tail, scaled so the strongest tap is `gain`.
    public static func echoPath(sampleRate: Int, delayMilliseconds: Double, tailMilliseconds: Double,
                                gain: Float, seed: UInt64 = 7) -> [Float] {
        var random = SplitMix64(seed: seed)
        let delayFrames = Int(delayMilliseconds * Double(sampleRate) / 1000)
        let tailFrames = max(1, Int(tailMilliseconds * Double(sampleRate) / 1000))
        var taps = [Float](repeating: 0, count: delayFrames + tailFrames)
        taps[delayFrames] = gain
        for index in 1..<tailFrames {
            let decay = Float(pow(10, -3 * Double(index) / Double(tailFrames)))
            taps[delayFrames + index] = gain * 0.5 * decay * Float(random.unit() * 2 - 1)
        }
        return taps
    }

    /// `signal` filtered by `impulseResponse`, same length as `signal` (the tail past the end is dropped).
    public static func convolve(_ signal: [Float], with impulseResponse: [Float]) -> [Float] {
        var output = [Float](repeating: 0, count: signal.count)
        for (lag, tap) in impulseResponse.enumerated() where tap != 0 && lag < signal.count {
            for index in lag..<signal.count { output[index] += tap * signal[index - lag] }
        }
        return output
    }
}
