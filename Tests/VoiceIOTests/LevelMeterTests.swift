import Testing
import VoiceIO
import VoiceIOSimulation

@Suite struct LevelMeterTests {
    @Test func fullScaleSineReadsMinus3dBRMSAnd0dBPeak() {
        // 48 whole periods of 1 kHz at 48 kHz, phase chosen so the peak sample is exactly ±1.
        let sine = SyntheticAudio.sine(frequency: 1000, sampleRate: 48000, frameCount: 2400, phase: .pi / 2)
        let level = sine.withUnsafeBufferPointer { LevelMeter.measure($0) }
        #expect(abs(level.rmsDBFS - -3.0103) < 0.001)
        #expect(abs(level.peakDBFS) < 0.0001)
    }

    @Test func halfScaleSquareWaveReadsMinus6dB() {
        let square = (0..<480).map { $0 % 48 < 24 ? Float(0.5) : -0.5 }
        let level = square.withUnsafeBufferPointer { LevelMeter.measure($0) }
        #expect(abs(level.rmsDBFS - -6.0206) < 0.001)
        #expect(abs(level.peakDBFS - -6.0206) < 0.001)
    }

    @Test func int16FullScaleMatchesFloat() {
        let square = (0..<480).map { $0 % 48 < 24 ? Int16.max : Int16.min }
        let level = square.withUnsafeBufferPointer { LevelMeter.measure($0) }
        #expect(abs(level.rmsDBFS) < 0.001)
        #expect(level.peakDBFS == 0)
    }

    @Test func silenceAndEmptyBlocksReadTheFloor() {
        let silence = [Float](repeating: 0, count: 160)
        #expect(silence.withUnsafeBufferPointer { LevelMeter.measure($0) } == .silence)
        #expect(LevelMeter.measure(UnsafeBufferPointer<Float>(start: nil, count: 0)) == .silence)
        #expect(Level.silence == Level(rmsDBFS: -120, peakDBFS: -120))
        let whisper = [Float](repeating: 1e-9, count: 160)
        #expect(whisper.withUnsafeBufferPointer { LevelMeter.measure($0) } == .silence)
    }
}
