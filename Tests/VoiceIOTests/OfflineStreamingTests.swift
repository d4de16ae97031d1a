import Testing
import VoiceIO
import VoiceIOSimulation

/// `OfflineVoiceProcessor.process(microphone:loudspeaker:deliver:)`, which `voicepeer process` uses to write its
/// output as it goes (so a kill leaves a playable start of the file).
@Suite struct OfflineStreamingTests {
    static let deviceRate = 48000
    static let voiceRate = 16000

    static func signals(seconds: Double) -> (microphone: [Float], loudspeaker: [Float]) {
        let frameCount = Int(seconds * Double(deviceRate))
        let far = SyntheticAudio.sine(frequency: 300, sampleRate: deviceRate, frameCount: frameCount, amplitude: 0.3)
        let near = SyntheticAudio.sine(frequency: 700, sampleRate: deviceRate, frameCount: frameCount, amplitude: 0.2)
        return (zip(far, near).map { 0.5 * $0 + $1 }, far)
    }

    @Test func blocksArriveAsProducedAndJoinIntoTheWholeOutput() throws {
        let (microphone, loudspeaker) = Self.signals(seconds: 2)
        let whole = try OfflineVoiceProcessor(deviceRate: Self.deviceRate, voiceRate: Self.voiceRate)
            .process(microphone: microphone, loudspeaker: loudspeaker)
        var blockSizes: [Int] = []
        var joined: [Float] = []
        try OfflineVoiceProcessor(deviceRate: Self.deviceRate, voiceRate: Self.voiceRate)
            .process(microphone: microphone, loudspeaker: loudspeaker) { (frames) throws(Never) in
                blockSizes.append(frames.count)
                joined.append(contentsOf: frames)
            }
        #expect(joined.count == microphone.count * Self.voiceRate / Self.deviceRate)
        #expect(joined == whole)
        // Streamed, not handed over at the end: many blocks, none longer than a few 10 ms periods.
        #expect(blockSizes.count > 150)
        #expect((blockSizes.max() ?? 0) <= 4 * Self.voiceRate / 100)
    }

    struct Stop: Error {}

    @Test func aFailingDeliveryStopsTheRunAndKeepsWhatWasDelivered() throws {
        let (microphone, loudspeaker) = Self.signals(seconds: 2)
        let processor = try OfflineVoiceProcessor(deviceRate: Self.deviceRate, voiceRate: Self.voiceRate)
        var delivered = 0
        var accepted = 0
        var calls = 0
        #expect(throws: Stop.self) {
            try processor.process(microphone: microphone, loudspeaker: loudspeaker) { (frames) throws(Stop) in
                calls += 1
                guard delivered < Self.voiceRate / 2 else { throw Stop() }
                delivered += frames.count
                accepted += 1
            }
        }
        #expect(delivered >= Self.voiceRate / 2 && delivered < Self.voiceRate / 2 + Self.voiceRate / 10)
        #expect(calls == accepted + 1, "the run went on after the delivery failed")
    }
}
