/// The loudspeaker side of the unit: far-end voice pulled from the app, up-converted, mixed with ducked other
/// audio, muted on request. What it writes is both the playback and the echo reference.
///
/// ```
/// render callback (voice rate) -> up-convert -> far FIFO --+
/// other-audio ring + graph (device rate) -> Ducker -----------------+-> mix -> clip -> mute ramp -> playback = reference
/// ```
/// `render` is real-time safe; one thread.
final class PlaybackChain {
    let deviceRate: Int
    let voiceFormat: StreamFormat
    /// Most voice frames one render callback is asked for: a period's worth at the voice rate, plus one.
    let maximumPullFrameCount: Int
    let ducker: Ducker
    var renderCallback: VoiceRenderCallback?
    /// Adds more other audio (an audio graph's mix) to each period, after the queued sounds.
    var otherAudioRenderer: OtherAudioRenderer?
    /// Far-end RMS above which the far end counts as talking, in dBFS.
    static let farActivityThresholdDBFS: Float = -45
    private let converter: RateConverter
    private let farFIFO: SPSCRing<Float>
    private let voiceBlock: UnsafeMutableBufferPointer<Float>
    private let voiceBlockInt16: UnsafeMutableBufferPointer<Int16>
    private let convertedBlock: UnsafeMutableBufferPointer<Float>
    private let otherBlock: UnsafeMutableBufferPointer<Float>
    private var muteGain: Float = 1

    /// Whether the last period carried far-end voice.
    private(set) var isFarVoiceActive = false
    private(set) var farLevel = Level.silence
    private(set) var otherLevel = Level.silence
    /// Periods in which other audio that was playing ran short (the end of each sound counts once).
    private(set) var otherAudioUnderrunCount = 0
    private var wasOtherAudioPlaying = false

    /// Not real-time safe.
    init(deviceRate: Int, voiceFormat: StreamFormat, maximumPeriodFrames: Int) throws(SpeexError) {
        self.deviceRate = deviceRate
        self.voiceFormat = voiceFormat
        maximumPullFrameCount = maximumPeriodFrames * voiceFormat.sampleRate / deviceRate + 2
        ducker = Ducker(sampleRate: deviceRate)
        converter = try RateConverter(inputRate: voiceFormat.sampleRate, outputRate: deviceRate,
                                      maximumInputFrames: maximumPullFrameCount)
        farFIFO = SPSCRing(minimumCapacity: maximumPeriodFrames + 2 * converter.maximumOutputFrames, filledWith: 0)
        voiceBlock = .allocate(capacity: maximumPullFrameCount)
        voiceBlock.initialize(repeating: 0)
        voiceBlockInt16 = .allocate(capacity: maximumPullFrameCount)
        voiceBlockInt16.initialize(repeating: 0)
        convertedBlock = .allocate(capacity: converter.maximumOutputFrames)
        convertedBlock.initialize(repeating: 0)
        otherBlock = .allocate(capacity: maximumPeriodFrames)
        otherBlock.initialize(repeating: 0)
    }

    deinit {
        voiceBlock.deallocate()
        voiceBlockInt16.deallocate()
        convertedBlock.deallocate()
        otherBlock.deallocate()
    }

    /// Fills `playback` with the next period of loudspeaker signal. `nearVoiceActive` drives voice-activity
    /// ducking together with the far end. Real-time safe.
    func render(into playback: UnsafeMutableBufferPointer<Float>, otherAudio: SPSCRing<Float>,
                duckLevelDB: Float?, duckOnVoiceOnly: Bool, nearVoiceActive: Bool, mute: Bool) {
        let count = min(playback.count, otherBlock.count)
        pullFarVoice(frameCount: count)
        farFIFO.read(into: UnsafeMutableBufferPointer(rebasing: playback[..<count]))
        farLevel = LevelMeter.measure(UnsafeBufferPointer(rebasing: playback[..<count]))
        isFarVoiceActive = farLevel.rmsDBFS > Self.farActivityThresholdDBFS

        let other = UnsafeMutableBufferPointer(rebasing: otherBlock[..<count])
        let otherCount = otherAudio.read(into: other)
        if otherCount < count {
            other.baseAddress!.advanced(by: otherCount).update(repeating: 0, count: count - otherCount)
            if wasOtherAudioPlaying { otherAudioUnderrunCount += 1 }
        }
        wasOtherAudioPlaying = otherCount == count
        otherAudioRenderer?(other)
        let voiceActive = !duckOnVoiceOnly || isFarVoiceActive || nearVoiceActive
        ducker.process(other, levelDB: duckLevelDB ?? 0, isActive: duckLevelDB != nil && voiceActive)
        otherLevel = LevelMeter.measure(UnsafeBufferPointer(other))

        let targetGain: Float = mute ? 0 : 1
        let rampStep = 1 / Float(count)
        for index in 0..<count {
            if muteGain < targetGain { muteGain = min(muteGain + rampStep, targetGain) }
            if muteGain > targetGain { muteGain = max(muteGain - rampStep, targetGain) }
            let mixed = playback[index] + other[index]
            playback[index] = min(max(mixed, -1), 1) * muteGain
        }
    }

    /// Asks the app for the voice frames a period's worth of device-rate frames still lacks, in one call as a
    /// rule: a device whose period is not a whole number of 10 ms (PipeWire's 512 frames at 48 kHz) is asked for
    /// its own span every period (170 or 171 frames at 16 kHz), not 10 ms blocks that fall one or two to a
    /// period, so the jitter buffer behind the callback sees evenly spaced pulls. A second, small call tops up
    /// what conversion's rounding left short.
    private func pullFarVoice(frameCount: Int) {
        while farFIFO.availableToRead < frameCount {
            let missing = frameCount - farFIFO.availableToRead
            let pullCount = min(max((missing * voiceFormat.sampleRate + deviceRate - 1) / deviceRate, 1),
                                maximumPullFrameCount)
            let voice = UnsafeMutableBufferPointer(rebasing: voiceBlock[..<pullCount])
            if let renderCallback {
                switch voiceFormat.sampleType {
                case .float32:
                    renderCallback(.float32(voice))
                case .int16:
                    let voiceInt16 = UnsafeMutableBufferPointer(rebasing: voiceBlockInt16[..<pullCount])
                    renderCallback(.int16(voiceInt16))
                    SampleConversion.float(from: UnsafeBufferPointer(voiceInt16), into: voice)
                }
            } else {
                voice.update(repeating: 0)
            }
            let produced = converter.convert(UnsafeBufferPointer(voice), into: convertedBlock)
            farFIFO.write(UnsafeBufferPointer(rebasing: convertedBlock[..<produced]))
        }
    }
}
