import Foundation
import Testing
import CAllocCounter
@testable import VoiceIO

@Suite struct DelayEstimatorTests {
    static let rate = 16000
    static let block = 160

    /// Runs the estimator over mic/far in 10 ms blocks; calls `observe` after each block with the time in s.
    static func run(_ estimator: DelayEstimator, far: [Float], mic: [Float],
                    observe: (Double, DelayEstimator) -> Void = { _, _ in }) {
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeBufferPointer { m in
                var start = 0
                while start + block <= min(f.count, m.count) {
                    estimator.process(reference: UnsafeBufferPointer(rebasing: f[start..<start + block]),
                                      microphone: UnsafeBufferPointer(rebasing: m[start..<start + block]))
                    start += block
                    observe(Double(start) / Double(rate), estimator)
                }
            }
        }
    }

    static func milliseconds(_ frames: Int?) -> Double? { frames.map { Double($0) * 1000 / Double(rate) } }

    /// Echo of a speech-like far end through a reverberant path with noise, 6 dB below the far end.
    static func scene(bulkMilliseconds: Double, seconds: Double, clipped: Bool = false,
                      nearTalker: Bool = false) -> (far: [Float], mic: [Float]) {
        let fixture = EchoSceneFixture(sampleRate: rate)
        let far = fixture.speechLike(seconds: seconds, seed: 11)
        let played = clipped ? far.map { max(-0.12, min(0.12, $0)) } : far
        let taps = fixture.roomResponse(bulkMilliseconds: bulkMilliseconds, seed: 5)
        var mic = EchoSceneFixture.convolve(played, taps: taps, gain: 0.5, count: far.count)
        let noise = fixture.noise(count: far.count, rms: 0.002, seed: 9)
        let near = nearTalker ? fixture.speechLike(seconds: seconds, rms: 0.1, seed: 77) : []
        for i in mic.indices { mic[i] += noise[i] + (nearTalker ? near[i] : 0) }
        return (far, mic)
    }

    @Test(arguments: [0.0, 60, 250, 480])
    func findsTheBulkDelayWithinASecond(bulkMilliseconds: Double) throws {
        let (far, mic) = Self.scene(bulkMilliseconds: bulkMilliseconds, seconds: 1.0 + bulkMilliseconds / 1000)
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        Self.run(estimator, far: far, mic: mic)
        let found = try #require(Self.milliseconds(estimator.delayFrames))
        #expect(abs(found - bulkMilliseconds) <= 2, "found \(found) ms for \(bulkMilliseconds) ms")
        #expect(estimator.confidence > 0.3)
    }

    @Test func findsTheDelayThroughAClippingSpeaker() throws {
        let (far, mic) = Self.scene(bulkMilliseconds: 250, seconds: 1.25, clipped: true)
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        Self.run(estimator, far: far, mic: mic)
        let found = try #require(Self.milliseconds(estimator.delayFrames))
        #expect(abs(found - 250) <= 2)
    }

    @Test func followsAJumpFrom100To300Milliseconds() throws {
        let before = Self.scene(bulkMilliseconds: 100, seconds: 6)
        let after = Self.scene(bulkMilliseconds: 300, seconds: 6)
        let jump = 3 * Self.rate
        let mic = Array(before.mic[0..<jump] + after.mic[jump...])
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        var atJump: Double?
        var followedAt: Double?
        Self.run(estimator, far: before.far, mic: mic) { t, e in
            guard let found = Self.milliseconds(e.delayFrames) else { return }
            if t <= 3 { atJump = found }
            if t > 3, followedAt == nil, abs(found - 300) <= 2 { followedAt = t }
        }
        #expect(abs(try #require(atJump) - 100) <= 2)
        let followed = try #require(followedAt)
        #expect(followed - 3 < 2.0, "followed after \(followed - 3) s")
        #expect(abs(try #require(Self.milliseconds(estimator.delayFrames)) - 300) <= 2)
    }

    /// Unwindowed, the correlation of sustained music peaked at whole partitions (16 ms steps) and the estimate
    /// locked there.
    @Test(.enabled(if: Signal.isHeldMusicInstalled, "needs asterisk-moh-opsound-wav"), arguments: [70.0, 150])
    func findsTheDelayOfHeldMusic(bulkMilliseconds: Double) throws {
        let far = try Signal.heldMusic(seconds: 4, sampleRate: Self.rate)
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let taps = fixture.roomResponse(bulkMilliseconds: bulkMilliseconds, seed: 5)
        var mic = EchoSceneFixture.convolve(far, taps: taps, gain: 0.5, count: far.count)
        let noise = fixture.noise(count: far.count, rms: 0.001, seed: 9)
        for i in mic.indices { mic[i] += noise[i] }
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        var offAfterTwoSeconds = 0
        Self.run(estimator, far: far, mic: mic) { seconds, estimator in
            guard seconds >= 2 else { return }
            if Self.milliseconds(estimator.delayFrames).map({ abs($0 - bulkMilliseconds) > 2 }) ?? true {
                offAfterTwoSeconds += 1
            }
        }
        let found = try #require(Self.milliseconds(estimator.delayFrames))
        #expect(abs(found - bulkMilliseconds) <= 2, "found \(found) ms for \(bulkMilliseconds) ms")
        #expect(offAfterTwoSeconds == 0, "\(offAfterTwoSeconds) blocks without the delay after 2 s")
    }

    /// A near talker 6 dB louder than the echo from the start: every published estimate must be right.
    @Test func isNotFooledByDoubleTalk() throws {
        let (far, mic) = Self.scene(bulkMilliseconds: 120, seconds: 4, nearTalker: true)
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        var wrong = 0
        var firstAt: Double?
        Self.run(estimator, far: far, mic: mic) { t, e in
            guard let found = Self.milliseconds(e.delayFrames) else { return }
            if firstAt == nil { firstAt = t }
            if abs(found - 120) > 2 { wrong += 1 }
        }
        #expect(wrong == 0)
        #expect(try #require(firstAt) < 2.5)
    }

    @Test func staysSilentWithoutEcho() {
        let fixture = EchoSceneFixture(sampleRate: Self.rate)
        let far = fixture.speechLike(seconds: 3, seed: 3)
        let mic = fixture.noise(count: far.count, rms: 0.01, seed: 4)
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        Self.run(estimator, far: far, mic: mic)
        #expect(estimator.delayFrames == nil)
    }

    @Test(arguments: [8000, 48000])
    func worksAtOtherRates(rate: Int) throws {
        let fixture = EchoSceneFixture(sampleRate: rate)
        let far = fixture.speechLike(seconds: 1.5, seed: 21)
        let taps = fixture.roomResponse(bulkMilliseconds: 90, seed: 6)
        let mic = EchoSceneFixture.convolve(far, taps: taps, gain: 0.5, count: far.count)
        let block = rate / 100
        let estimator = DelayEstimator(sampleRate: rate, blockFrameCount: block)
        far.withUnsafeBufferPointer { f in
            mic.withUnsafeBufferPointer { m in
                for start in stride(from: 0, to: f.count - block, by: block) {
                    estimator.process(reference: UnsafeBufferPointer(rebasing: f[start..<start + block]),
                                      microphone: UnsafeBufferPointer(rebasing: m[start..<start + block]))
                }
            }
        }
        let found = try #require(estimator.delayFrames)
        #expect(abs(Double(found) * 1000 / Double(rate) - 90) <= 2)
    }

    @Test func processDoesNotAllocate() {
        let (far, mic) = Self.scene(bulkMilliseconds: 40, seconds: 1)
        // An unoptimised build instantiates generic metadata the first time a path runs (once per process, so
        // whether it lands here depends on which test ran first): a warm-up estimator takes every path of the
        // scene first. The first counted block may still make the runtime's per-thread allocations.
        Self.run(DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block), far: far, mic: mic)
        let estimator = DelayEstimator(sampleRate: Self.rate, blockFrameCount: Self.block)
        var counting = false
        Self.run(estimator, far: far, mic: mic) { _, _ in
            if !counting { alloc_counter_start(); counting = true }
        }
        #expect(alloc_counter_stop() == 0)
        #expect(estimator.delayFrames != nil)
    }
}
