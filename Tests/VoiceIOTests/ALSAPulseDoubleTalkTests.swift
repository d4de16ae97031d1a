import Testing
@testable import VoiceIO

/// Double talk in real time on the PulseAudio loopback (same suite and daemon as `ALSAPulseLoopbackTests`): the
/// far end's echo comes back through the null sink's monitor with the server's timing, and a near talker as loud
/// as that echo is added to the capture from the fourth second on. The unit must take the echo off while the far
/// end plays alone and keep the talker once it speaks over it.
extension ALSAPulseLoopbackTests {
    /// A run the machine disturbed (xruns, a starved daemon) is repeated (3 at most), as in
    /// `theUnitRemovesTheLoopbacksEcho`.
    @Test func theUnitKeepsANearTalkerOverTheLoopbacksEcho() throws {
        let seconds = 8.0, talkerFrom = 4.0
        let talker = try EchoRunSupport.nearTalker(seconds: seconds - talkerFrom, deviceRate: Self.sampleRate,
                                                   voiceRate: Self.voiceRate)
        let (run, attempts) = try Self.undisturbedRun("pulse double talk") {
            try Self.runEcho(seconds: seconds, bypass: false, nearTalker: talker.device, nearTalkerFromSeconds: talkerFrom)
        }
        let echoAlone = run.reductionDB(fromSeconds: 2.5, toSeconds: 4)
        let kept = EchoRunSupport.talkerGain(processed: run.processed, talker: talker.voice, voiceRate: Self.voiceRate,
                                             fromSeconds: talkerFrom, span: (talkerFrom + 0.5)...seconds)
        print("pulse double talk: echo alone reduced \(echoAlone) dB (2.5-4 s); near talker in double talk"
              + " \(kept.gainDB) dB (correlation \(kept.correlation), 4.5-8 s); \(Self.describe(run.statistics));"
              + " attempt \(attempts)\(run.disturbance.map { ", still disturbed: \($0)" } ?? "")")
        #expect(echoAlone >= 20, "echo reduced by only \(echoAlone) dB before the talker")
        #expect(kept.gainDB >= -3 && kept.gainDB <= 1, "near talker at \(kept.gainDB) dB in double talk")
        #expect(kept.correlation >= 0.8, "the output holds the talker at correlation \(kept.correlation)")
    }

    /// A headset on PulseAudio: the unit plays into the loopback's sink and captures a second one that hears none of
    /// it (`voiceio_headset`, digital silence), a talker 13 dB under the far end added to that capture from the fifth
    /// second on. The filter finds no echo, and neither its restarts, a chance delay lock on the talker, nor a
    /// microphone that was digitally silent may cost the talker (as `theUnitKeepsAHeadsetsTalkerOnPipeWire`).
    @Test func theUnitKeepsAHeadsetsTalkerOnPulseAudio() throws {
        let talker = try EchoRunSupport.headsetTalker(deviceRate: Self.sampleRate, voiceRate: Self.voiceRate)
        let (run, attempts) = try Self.undisturbedRun("pulse headset") {
            try Self.runEcho(seconds: EchoRunSupport.headsetSeconds, bypass: false, nearTalker: talker.device,
                             nearTalkerFromSeconds: EchoRunSupport.headsetTalkerFromSeconds, headset: true)
        }
        let gains = EchoRunSupport.checkHeadset(microphone: run.microphone, deviceRate: Self.sampleRate,
                                                processed: run.processed, talker: talker.voice, voiceRate: Self.voiceRate)
        print("pulse headset: near talker per 3 s from \(EchoRunSupport.headsetTalkerFromSeconds + 1) s: \(gains) dB;"
              + " \(Self.describe(run.statistics)); no echo found \(run.statistics.isNoEchoFound); attempt \(attempts)"
              + "\(run.disturbance.map { ", still disturbed: \($0)" } ?? "")")
    }
}
