import Synchronization
import VoiceIO

/// The real-time glue of a `CallEndpoint`: joins the unit's callbacks to the call session, the voice recorders
/// and, on a device that knows its echo (`EchoGroundTruthSource`), the ground-truth ERLE meter.
///
/// ```
/// render callback ◄─ CallSession.renderReceived ◄─ network          input callback ─► readInput ─► CallSession.sendCaptured
///                 └─► far-end recorder                                                          ├─► sent recorder
///                                                                                               └─► ERLE meter (with the period's ground truth)
/// ```
/// Everything here runs on the device's real-time thread and is real-time safe (the scratch buffer is allocated
/// up front; no lock, no allocation).
final class CallAudioPath: @unchecked Sendable {
    private let unit: VoiceProcessingIO
    private let session: CallSession
    private let sent: StreamRecorder?
    private let far: StreamRecorder?
    private let groundTruth: (any EchoGroundTruthSource)?
    let echoMeter: ERLEMeter?
    private let scratch: UnsafeMutableBufferPointer<Float>

    /// Not real-time safe. `settlePeriodCount`: echo-only periods in a row before one counts (the processed voice
    /// lags the microphone by about 20 ms, so the periods right after a near talker may still carry it).
    init(unit: VoiceProcessingIO, session: CallSession, sent: StreamRecorder?, far: StreamRecorder?,
         groundTruth: (any EchoGroundTruthSource)?, settlePeriodCount: Int = 4) {
        self.unit = unit
        self.session = session
        self.sent = sent
        self.far = far
        self.groundTruth = groundTruth
        echoMeter = groundTruth.map { _ in
            ERLEMeter(windowSeconds: unit.deviceConfiguration.periodMilliseconds / 1000,
                      settleWindowCount: settlePeriodCount)
        }
        scratch = .allocate(capacity: 2048)
        scratch.initialize(repeating: 0)
    }

    deinit { scratch.deallocate() }

    /// Sets the unit's callbacks. Not real-time safe; only while the unit is stopped.
    func connect() {
        unit.setRenderCallback { [unowned self] frames in
            guard case .float32(let buffer) = frames else { return }
            session.renderReceived(into: buffer)
            far?.append(UnsafeBufferPointer(buffer))
        }
        unit.setInputCallback { [unowned self] _ in deliverInput() }
    }

    private func deliverInput() {
        var sumOfSquares: Float = 0
        var frameCount = 0
        while true {
            let count = unit.readInput(into: .float32(scratch))
            guard count > 0 else { break }
            let frames = UnsafeBufferPointer(rebasing: scratch[..<count])
            if echoMeter != nil { for sample in frames { sumOfSquares += sample * sample } }
            session.sendCaptured(frames)
            sent?.append(frames)
            frameCount += count
        }
        // The device exchanges this period right now: its ground truth is this period's.
        if let echoMeter, let groundTruth {
            let truth = groundTruth.periodComponents
            echoMeter.add(microphoneMeanSquare: truth.microphoneMeanSquare,
                          processedMeanSquare: frameCount > 0 ? sumOfSquares / Float(frameCount) : 0,
                          gate: frameCount > 0 ? truth.erleGate : .noOutput, bypassed: unit.bypassVoiceProcessing)
        }
    }
}
