import Foundation

/// Generated echo scenes for the alignment and suppression tests: a speech-like far end, an echo through a
/// reverberant path with a bulk delay (optionally drifting or jumping), noise, and optionally a near talker.
struct EchoSceneFixture {
    var sampleRate = 16000
    var seed: UInt64 = 1

    /// Deterministic uniform noise in -1 ... 1.
    struct Noise {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int32(truncatingIfNeeded: state >> 32)) / Float(Int32.max)
        }
    }

    /// Noise with a spectral tilt (one-pole low-pass), gated by a syllable-rate envelope (about 4 syllables a
    /// second, with pauses), at roughly `rms` while active.
    func speechLike(seconds: Double, rms: Float = 0.1, seed: UInt64) -> [Float] {
        let count = Int(seconds * Double(sampleRate))
        var noise = Noise(state: seed)
        var out = [Float](repeating: 0, count: count)
        var lowpassed: Float = 0
        var syllableLeft = 0
        var syllableLength = 1
        var gain: Float = 0
        out.withUnsafeMutableBufferPointer { o in
            for i in 0..<count {
                if syllableLeft == 0 {
                    syllableLength = Int((0.12 + 0.16 * Double(noise.next() * 0.5 + 0.5)) * Double(sampleRate))
                    syllableLeft = syllableLength
                    gain = noise.next() > -0.6 ? 1 + 0.5 * noise.next() : 0  // one syllable in five is a pause
                }
                let phase = Float(syllableLength - syllableLeft) / Float(syllableLength)
                let envelope = gain * sin(Float.pi * phase)
                syllableLeft -= 1
                lowpassed = 0.85 * lowpassed + noise.next()
                o[i] = rms * 1.1 * envelope * lowpassed * 0.55
            }
        }
        return out
    }

    /// Echo path impulse response: direct path (gain 1) after `bulkMilliseconds`, then 60 decaying
    /// reflections over `tailMilliseconds` (RT60 = tail length).
    func roomResponse(bulkMilliseconds: Double, tailMilliseconds: Double = 150, seed: UInt64) -> [(offset: Int, gain: Float)] {
        var noise = Noise(state: seed)
        let bulk = Int(bulkMilliseconds * Double(sampleRate) / 1000)
        let tail = Double(tailMilliseconds) * Double(sampleRate) / 1000
        var taps = [(offset: bulk, gain: Float(1))]
        for _ in 0..<60 {
            let position = Double(noise.next() * 0.5 + 0.5) * tail + 0.002 * Double(sampleRate)
            let decay = Float(exp(-6.9 * position / tail))
            taps.append((bulk + Int(position), 0.35 * decay * noise.next()))
        }
        return taps
    }

    /// `source` through a sparse impulse response, scaled by `gain`; `count` output frames.
    static func convolve(_ source: [Float], taps: [(offset: Int, gain: Float)], gain: Float, count: Int) -> [Float] {
        var out = [Float](repeating: 0, count: count)
        source.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                for tap in taps where tap.offset < count {
                    let g = tap.gain * gain
                    for i in tap.offset..<min(count, s.count + tap.offset) { o[i] += g * s[i - tap.offset] }
                }
            }
        }
        return out
    }

    /// White noise at `rms`.
    func noise(count: Int, rms: Float, seed: UInt64) -> [Float] {
        var noise = Noise(state: seed)
        return (0..<count).map { _ in noise.next() * rms * 1.732 }
    }

    /// The first frames of the blocks of `blockFrameCount` frames within `frames` where `talker` is soft after its
    /// louder sounds (a word's end, the gap to the next syllable): 6 to 25 dB under its loudest block of the quarter
    /// second before. The blocks of that first quarter second are not judged.
    func softBlockStarts(of talker: [Float], frames: Range<Int>, blockFrameCount: Int) -> [Int] {
        let last = frames.upperBound - blockFrameCount
        let starts = Array(stride(from: frames.lowerBound, to: last, by: blockFrameCount))
        let powers = starts.map { talker[$0..<($0 + blockFrameCount)].reduce(Float(0)) { $0 + $1 * $1 } }
        let span = sampleRate / 4 / blockFrameCount
        return (min(span, powers.count)..<powers.count).compactMap { index in
            let loudest = powers[(index - span)..<index].max() ?? 0
            return powers[index] < loudest * 0.25 && powers[index] > loudest * 0.003 ? starts[index] : nil
        }
    }

    /// The direct path of a drifting echo: `source` delayed by bulk − ppm·10⁻⁶·t (the yardstick's sign:
    /// positive drift shrinks the delay), read with linear interpolation, plus a few reflections (seconds after the
    /// direct path, gain).
    func driftingEcho(_ source: [Float], bulkMilliseconds: Double, ppm: Double, gain: Float,
                      reflections: [(Double, Float)] = [(0, 1), (0.0031, 0.4), (0.0074, -0.3), (0.013, 0.2)])
        -> [Float] {
        let rate = Double(sampleRate)
        var out = [Float](repeating: 0, count: source.count)
        source.withUnsafeBufferPointer { s in
            out.withUnsafeMutableBufferPointer { o in
                for i in 0..<o.count {
                    let t = Double(i) / rate
                    var sum: Float = 0
                    for (offset, g) in reflections {
                        let position = Double(i) - (bulkMilliseconds / 1000 + offset - ppm * 1e-6 * t) * rate
                        let j = Int(position.rounded(.down))
                        guard j >= 0 && j + 1 < s.count else { continue }
                        let fraction = Float(position - Double(j))
                        sum += g * (s[j] * (1 - fraction) + s[j + 1] * fraction)
                    }
                    o[i] = sum * gain
                }
            }
        }
        return out
    }
}
