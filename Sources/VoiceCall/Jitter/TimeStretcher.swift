/// Pitch-synchronous overlap-add on decoded voice, in place: removes whole pitch periods to play a stretch
/// faster without changing its pitch ("accelerate"), or repeats the last one to make it last longer
/// ("expand"), as NetEQ's time-stretching does.
///
/// ```
/// accelerate:  | a | P1 | P2 | b |   ->   | a | P1·fade-out + P2·fade-in | b |     (one period P shorter)
/// expand:      | a | Pn |          ->   | a | Pn | Pn |                            (one period P longer)
/// ```
/// The period is found by normalized autocorrelation over 2.5–15 ms lags (67–400 Hz voice). A stretch whose best
/// match is weak (unvoiced or transient) is not accelerated.
///
/// Not thread-safe; `accelerate`, `expand` and `pitchPeriod` are real-time safe (no allocation: they work on
/// the caller's buffer).
struct TimeStretcher {
    let sampleRate: Int
    /// Shortest and longest period searched, in frames.
    let minPeriodFrameCount: Int
    let maxPeriodFrameCount: Int
    /// Normalized correlation a period must reach before speech is accelerated.
    static let minimumCorrelation: Float = 0.6

    init(sampleRate: Int) {
        self.sampleRate = sampleRate
        minPeriodFrameCount = sampleRate / 400
        maxPeriodFrameCount = sampleRate * 15 / 1000
    }

    /// The lag in `minPeriodFrameCount...maxLag` where `frames[start...]` best matches itself one lag later
    /// (over one lag's length), with that normalized correlation; nil when the frames are too short or silent.
    func pitchPeriod(_ frames: UnsafeMutableBufferPointer<Float>, start: Int,
                     maxLag: Int) -> (frameCount: Int, correlation: Float)? {
        let longest = min(maxLag, maxPeriodFrameCount, (frames.count - start) / 2)
        guard longest >= minPeriodFrameCount else { return nil }
        let base = frames.baseAddress! + start
        var best: (frameCount: Int, correlation: Float)?
        // Decimated search on every second lag, then refined around the best.
        var lag = minPeriodFrameCount
        while lag <= longest {
            let value = Self.normalizedCorrelation(base, base + lag, count: lag)
            if value > (best?.correlation ?? -1) { best = (lag, value) }
            lag += 2
        }
        guard let coarse = best else { return nil }
        for refined in max(minPeriodFrameCount, coarse.frameCount - 1)...min(longest, coarse.frameCount + 1) {
            let value = Self.normalizedCorrelation(base, base + refined, count: refined)
            if value > best!.correlation { best = (refined, value) }
        }
        return best
    }

    /// Removes whole pitch periods from `frames[0..<count]`, at most `maxRemovedFrameCount` frames in all;
    /// returns the new count. Works through the stretch from its start: each removal cross-fades one period into
    /// the next. Removes nothing where the periodicity is weaker than `minimumCorrelation` unless `isQuiet`.
    func accelerate(_ frames: UnsafeMutableBufferPointer<Float>, count: Int, maxRemovedFrameCount: Int,
                    isQuiet: Bool = false) -> Int {
        var count = count
        var removed = 0
        var start = 0
        while removed < maxRemovedFrameCount {
            let view = UnsafeMutableBufferPointer(rebasing: frames[..<count])
            guard let period = pitchPeriod(view, start: start, maxLag: maxRemovedFrameCount - removed),
                  isQuiet || period.correlation >= Self.minimumCorrelation else { break }
            let lag = period.frameCount
            let base = frames.baseAddress! + start
            Self.crossFade(into: base, from: base, to: base + lag, count: lag)
            (base + lag).update(from: base + 2 * lag, count: count - start - 2 * lag)
            count -= lag
            removed += lag
            start += lag
        }
        return count
    }

    /// Makes `frames[0..<count]` longer by repeating its last pitch period, at most `maxAddedFrameCount` frames
    /// and within `frames.count`; returns the new count. The frames before `count` are left as they are (they
    /// may have been played): the copy continues a periodic waveform, and ends where the original ended, so what
    /// follows the original follows the copy as well.
    func expand(_ frames: UnsafeMutableBufferPointer<Float>, count: Int, maxAddedFrameCount: Int) -> Int {
        let room = min(maxAddedFrameCount, frames.count - count)
        let searchStart = max(0, count - 2 * min(room, maxPeriodFrameCount))
        let view = UnsafeMutableBufferPointer(rebasing: frames[..<count])
        guard let period = pitchPeriod(view, start: searchStart, maxLag: room) else { return count }
        let lag = period.frameCount
        let base = frames.baseAddress!
        (base + count).update(from: base + count - lag, count: lag)
        return count + lag
    }

    /// `into[i] = from[i]·(1 − w) + to[i]·w`, w rising linearly over `count` frames (`into` may be `from`).
    private static func crossFade(into: UnsafeMutablePointer<Float>, from: UnsafeMutablePointer<Float>,
                                  to: UnsafeMutablePointer<Float>, count: Int) {
        let step = 1 / Float(count)
        for index in 0..<count {
            let weight = (Float(index) + 0.5) * step
            into[index] = from[index] * (1 - weight) + to[index] * weight
        }
    }

    private static func normalizedCorrelation(_ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>,
                                              count: Int) -> Float {
        var ab: Float = 0, aa: Float = 0, bb: Float = 0
        for index in 0..<count {
            ab += a[index] * b[index]
            aa += a[index] * a[index]
            bb += b[index] * b[index]
        }
        let energy = (aa * bb).squareRoot()
        return energy > 1e-12 ? ab / energy : 0
    }
}
