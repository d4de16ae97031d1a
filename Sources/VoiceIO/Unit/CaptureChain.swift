import Glibc

/// The microphone side of the unit: device-rate capture and echo reference in, processed voice out.
///
/// ```
/// capture (device rate) --> down-convert --> mic FIFO ------------------------+
/// reference (device rate) -> down-convert --> ref FIFO --> delay line --------+--> stage --> output ring
///                                                  \--> EchoAligner (delay) --^     (EchoPipeline or
///                                                                                    PassThroughProcessor)
/// ```
/// Both directions use converters with the same ratio fed the same frame counts, so the FIFOs stay in lock step
/// and processing runs on whole voice blocks as soon as both hold one. `process` is real-time safe; one thread.
final class CaptureChain {
    let deviceRate: Int
    let voiceRate: Int
    /// Frames per processing block at the voice rate (`blockMilliseconds`, rounded down).
    let blockFrameCount: Int
    let pipeline: EchoPipeline
    let passThrough: PassThroughProcessor
    let aligner: EchoAligner
    /// Delay the aligner is told about before it has an estimate, in voice-rate frames.
    private let microphoneConverter: RateConverter
    private let referenceConverter: RateConverter
    private let microphoneFIFO: SPSCRing<Float>
    private let referenceFIFO: SPSCRing<Float>
    private let delayLine: DelayLine
    private let convertedMicrophone: UnsafeMutableBufferPointer<Float>
    private let convertedReference: UnsafeMutableBufferPointer<Float>
    private let microphoneBlock: UnsafeMutableBufferPointer<Float>
    private let referenceBlock: UnsafeMutableBufferPointer<Float>
    private let processedBlock: UnsafeMutableBufferPointer<Float>
    private let crossfadeBlock: UnsafeMutableBufferPointer<Float>
    /// The stage the last block used (nil before the first block, which needs no cross-fade).
    private var wasBypassed: Bool?

    /// Echo return loss enhancement per block, gated on an active reference and (processing on) no double talk.
    let erle: ERLEMeter
    /// The smoothed ERLE (about half a second), in dB.
    var erleDB: Float { erle.liveDecibels }
    /// Whether the last block had near-end voice (the stage's decision, gated by the echo estimate).
    private(set) var isNearVoiceActive = false
    /// Whether the last block had a near talker by the stage's voice decision and the pipeline's confirmed near
    /// talker (`EchoPipeline.isNearTalkerConfirmed`): what muted speech detection uses.
    private(set) var isNearTalkerActive = false
    /// Level of the processed voice over the last period.
    private(set) var processedLevel = Level.silence
    /// Blocks processed so far, those in double talk, and the residual echo suppression summed over them (dB):
    /// running totals an observer differences over any span it likes.
    private(set) var blockCount = 0
    private(set) var doubleTalkBlockCount = 0
    private(set) var suppressionSumDB: Double = 0
    private var realignmentsSeen = 0
    /// `EchoPathSlide.measurementCount` when the aligner last took its residual.
    private var slideMeasurementsSeen = 0
    /// `EchoOnsetWatch.cutCount` when the aligner last moved the delay for it.
    private var onsetCutsSeen = 0
    /// Blocks in which the far end played before the aligner first locked onto its echo.
    private var unalignedFarEndBlocks = 0
    /// Whether the hold of an unaligned far end ended without a lock (it does not resume).
    private var isUnalignedHoldOver = false
    /// Far-end blocks without a lock after which the reference counts as aligned all the same: a far end that
    /// played this long with no echo found has none to find (a headset), and its near talker must not stay
    /// suppressed under it. While the aligner hears an echo it has not found (`EchoAligner.isEchoHeard`), the hold
    /// lasts up to `heardUnalignedFarEndSeconds`: ended at 3 s, the echo of our far-speaker f11 (found at 5.5 s) passed
    /// for a talker from 3.5 s, and the suppressor learned it so.
    private let unalignedFarEndBlockLimit: Int
    private let heardUnalignedFarEndBlockLimit: Int
    private static var unalignedFarEndSeconds: Double { 3 }
    private static var heardUnalignedFarEndSeconds: Double { 10 }

    /// `initialDelayFrames`: device-reported delay between playback and capture, in device-rate frames.
    /// `blockMilliseconds`: the processing block (5 or 10 ms).
    /// Not real-time safe (allocates everything the real-time path needs).
    init(deviceRate: Int, voiceRate: Int, maximumPeriodFrames: Int, blockMilliseconds: Int = 10,
         settings: EchoPipelineSettings, initialDelayFrames: Int) throws(SpeexError) {
        self.deviceRate = deviceRate
        self.voiceRate = voiceRate
        blockFrameCount = voiceRate * blockMilliseconds / 1000
        microphoneConverter = try RateConverter(inputRate: deviceRate, outputRate: voiceRate,
                                                maximumInputFrames: maximumPeriodFrames)
        referenceConverter = try RateConverter(like: microphoneConverter, maximumInputFrames: maximumPeriodFrames)
        pipeline = try EchoPipeline(sampleRate: voiceRate, blockFrameCount: blockFrameCount, settings: settings)
        erle = ERLEMeter(windowSeconds: Double(blockFrameCount) / Double(voiceRate))
        passThrough = PassThroughProcessor(blockFrameCount: blockFrameCount)
        aligner = EchoAligner(sampleRate: voiceRate, maximumBlockFrames: blockFrameCount,
                              initialDelayFrames: initialDelayFrames * voiceRate / deviceRate)
        unalignedFarEndBlockLimit = Int(Self.unalignedFarEndSeconds * Double(voiceRate)) / blockFrameCount
        heardUnalignedFarEndBlockLimit = Int(Self.heardUnalignedFarEndSeconds * Double(voiceRate)) / blockFrameCount
        let fifoFrames = 2 * (microphoneConverter.maximumOutputFrames + blockFrameCount)
        microphoneFIFO = SPSCRing(minimumCapacity: fifoFrames, filledWith: 0)
        referenceFIFO = SPSCRing(minimumCapacity: fifoFrames, filledWith: 0)
        delayLine = DelayLine(maximumDelayFrames: aligner.maximumDelayFrames, maximumBlockFrames: blockFrameCount)
        convertedMicrophone = .allocate(capacity: microphoneConverter.maximumOutputFrames)
        convertedReference = .allocate(capacity: referenceConverter.maximumOutputFrames)
        microphoneBlock = .allocate(capacity: blockFrameCount)
        referenceBlock = .allocate(capacity: blockFrameCount)
        processedBlock = .allocate(capacity: blockFrameCount)
        crossfadeBlock = .allocate(capacity: blockFrameCount)
        for buffer in [convertedMicrophone, convertedReference, microphoneBlock, referenceBlock, processedBlock,
                       crossfadeBlock] {
            buffer.initialize(repeating: 0)
        }
    }

    deinit {
        for buffer in [convertedMicrophone, convertedReference, microphoneBlock, referenceBlock, processedBlock,
                       crossfadeBlock] {
            buffer.deallocate()
        }
    }

    /// Frames of delay the chain adds between capture and output, in voice-rate frames (conversion only; the
    /// block FIFO adds up to one block more, processing adds `processingLatencyFrames` unless bypassed).
    var latencyFrames: Int { microphoneConverter.latencyFrames }
    /// Frames of delay the processing stage adds (not the pass-through), in voice-rate frames.
    var processingLatencyFrames: Int { pipeline.latencyFrames }

    /// Bulk delay applied to the reference now, in milliseconds.
    var delayMilliseconds: Float { Float(aligner.delayFrames * 1000 / Double(voiceRate)) }

    /// Processes one device period: `capture` and `reference` have the same count. Writes processed voice to
    /// `output` and returns the frames written; frames that do not fit are counted in `droppedFrames`. `mute`
    /// writes silence in place of the processed voice (processing and near-voice detection go on).
    /// Real-time safe.
    func process(capture: UnsafeBufferPointer<Float>, reference: UnsafeBufferPointer<Float>, bypass: Bool,
                 agc: Bool, mute: Bool = false, output: SPSCRing<Float>, droppedFrames: inout Int) -> Int {
        let microphoneCount = microphoneConverter.convert(capture, into: convertedMicrophone)
        let referenceCount = referenceConverter.convert(reference, into: convertedReference)
        microphoneFIFO.write(UnsafeBufferPointer(rebasing: convertedMicrophone[..<microphoneCount]))
        referenceFIFO.write(UnsafeBufferPointer(rebasing: convertedReference[..<referenceCount]))
        pipeline.isAGCEnabled = agc
        var written = 0
        var sumOfSquares: Float = 0
        var peak: Float = 0
        while microphoneFIFO.availableToRead >= blockFrameCount, referenceFIFO.availableToRead >= blockFrameCount {
            microphoneFIFO.read(into: microphoneBlock)
            referenceFIFO.read(into: referenceBlock)
            processBlock(bypass: bypass)
            if mute { processedBlock.update(repeating: 0) }
            for sample in processedBlock {
                sumOfSquares += sample * sample
                peak = max(peak, abs(sample))
            }
            let accepted = output.write(UnsafeBufferPointer(processedBlock))
            droppedFrames += blockFrameCount - accepted
            written += blockFrameCount
        }
        if written > 0 {
            processedLevel = Level(
                rmsDBFS: LevelMeter.dBFS(amplitude: Double((sumOfSquares / Float(written)).squareRoot())),
                peakDBFS: LevelMeter.dBFS(amplitude: Double(peak)))
        }
        return written
    }

    private func processBlock(bypass: Bool) {
        let microphone = UnsafeBufferPointer(microphoneBlock)
        aligner.observe(microphone: microphone, reference: UnsafeBufferPointer(referenceBlock))
        // Before the first lock the reference may lead its echo by up to the aligner's range: the suppressor holds
        // the far end's sound that long (`EchoPipeline.isReferenceAligned`).
        if aligner.realignmentCount == 0
            && meanSquare(UnsafeBufferPointer(referenceBlock)) > ResidualEchoSuppressor.farEndMeanSquare {
            unalignedFarEndBlocks += 1
        }
        let limit = aligner.isEchoHeard ? heardUnalignedFarEndBlockLimit : unalignedFarEndBlockLimit
        isUnalignedHoldOver = isUnalignedHoldOver || unalignedFarEndBlocks > limit
        pipeline.isReferenceAligned = aligner.realignmentCount > 0 || isUnalignedHoldOver
        if aligner.realignmentCount != realignmentsSeen {
            // The reference moved under the filter: what it learned no longer fits.
            realignmentsSeen = aligner.realignmentCount
            pipeline.reset()
        }
        // Bypassed, nothing reads the delayed reference: the delay line only keeps its history for the switch
        // back (the aligner keeps estimating, so the delay is current then).
        let steadyBypass = bypass && wasBypassed == true
        if steadyBypass {
            delayLine.write(UnsafeBufferPointer(referenceBlock))
        } else {
            delayLine.process(UnsafeBufferPointer(referenceBlock), into: referenceBlock, delayFrames: aligner.delayFrames)
        }
        let reference = UnsafeBufferPointer(referenceBlock)
        let referencePower = meanSquare(reference)
        let stageVoice: Bool
        if bypass == (wasBypassed ?? bypass) {
            wasBypassed = bypass
            stageVoice = bypass
                ? passThrough.process(microphone: microphone, reference: reference, output: processedBlock)
                : pipeline.process(microphone: microphone, reference: reference, output: processedBlock)
        } else {
            // Switching stage: run both for this block and fade from the old one to the new one.
            let toBypass = passThrough.process(microphone: microphone, reference: reference, output: crossfadeBlock)
            let toPipeline = pipeline.process(microphone: microphone, reference: reference, output: processedBlock)
            stageVoice = bypass ? toBypass : toPipeline
            let step = 1 / Float(blockFrameCount)
            for index in 0..<blockFrameCount {
                let bypassWeight = bypass ? Float(index + 1) * step : 1 - Float(index + 1) * step
                processedBlock[index] = bypassWeight * crossfadeBlock[index] + (1 - bypassWeight) * processedBlock[index]
            }
            wasBypassed = bypass
        }
        // The drift the filter found left over corrects the aligner's (`EchoAligner.trimDrift`).
        if pipeline.slide.measurementCount != slideMeasurementsSeen {
            slideMeasurementsSeen = pipeline.slide.measurementCount
            aligner.trimDrift(byResidualPPM: pipeline.slide.residualDriftPPM)
        }
        // The echo starts before the filter (`EchoOnsetWatch`): the delay moves earlier, and the filter starts over.
        if pipeline.onset.cutCount != onsetCutsSeen {
            onsetCutsSeen = pipeline.onset.cutCount
            aligner.leadEarlierOnset()
        }
        // Double talk is not echo: the near voice is meant to stay, and would pass for unremoved echo.
        let gate: ERLEMeter.Gate = referencePower <= ERLEMeter.minimumEchoMeanSquare ? .quietReference
            : !bypass && pipeline.isDoubleTalk ? .doubleTalk : .echo
        erle.add(microphoneMeanSquare: meanSquare(microphone), processedMeanSquare: meanSquare(UnsafeBufferPointer(processedBlock)),
                 gate: gate, bypassed: bypass)
        blockCount += 1
        if !bypass {
            doubleTalkBlockCount += pipeline.isDoubleTalk ? 1 : 0
            suppressionSumDB += Double(pipeline.suppressionDB)
        }
        // While the loudspeaker plays, the stage's voice decision only counts once the echo is well below the
        // microphone: otherwise the echo itself (far voice, app sounds) would pass for a near talker.
        isNearVoiceActive = stageVoice && (referencePower < 1e-6 || erleDB > Self.nearActivityMinimumERLEDB)
        isNearTalkerActive = isNearVoiceActive && (bypass || pipeline.isNearTalkerConfirmed)
    }

    /// ERLE above which voice in the processed signal is taken for the near talker while the speaker plays.
    static let nearActivityMinimumERLEDB: Float = 10

    private func meanSquare(_ block: UnsafeBufferPointer<Float>) -> Float {
        var sum: Float = 0
        for sample in block { sum += sample * sample }
        return sum / Float(max(block.count, 1))
    }
}
