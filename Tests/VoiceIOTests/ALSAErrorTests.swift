import Testing
@testable import VoiceIO

/// Failures come from alsa-lib itself and read as one line naming the device and alsa-lib's reason.
@Suite struct ALSAErrorTests {
    static func openError(_ device: ALSADevice) throws -> ALSAError {
        try #require(throws: ALSAError.self) { _ = try device.open(requested: .request(sampleRate: 48000)) }
    }

    @Test func aMissingPCMNamesTheDeviceAndAlsaLibsReason() throws {
        let error = try Self.openError(ALSADevice(name: "voiceio_no_such_pcm", config: try ALSATestSupport.config()))
        #expect(error.isMissing)
        #expect(error.description == "alsa:voiceio_no_such_pcm: cannot open capture PCM: No such file or directory")
    }

    @Test func aMissingPCMInTheGlobalConfigurationToo() throws {
        let error = try #require(throws: ALSAError.self) {
            _ = try ALSAPCM(name: "voiceio_no_such_pcm", direction: .playback)
        }
        #expect(error.description == "alsa:voiceio_no_such_pcm: cannot open playback PCM: No such file or directory")
    }

    @Test func aPCMRefusingTheSampleFormatSaysWhichFormatsWereTried() throws {
        let options = ALSADevice.Options(sampleTypes: [.float32], realTimePriority: nil)
        let error = try Self.openError(ALSADevice(name: "voiceio_mulaw_only", config: try ALSATestSupport.config(),
                                                  options: options))
        #expect(error.description == "alsa:voiceio_mulaw_only: cannot use sample format FLOAT_LE: Invalid argument")
        #expect(!error.description.contains("\n"))
    }

    @Test func theSamePCMTakesLinearIntegers() throws {
        let device = ALSADevice(name: "voiceio_mulaw_only", config: try ALSATestSupport.config())
        _ = try device.open(requested: .request(sampleRate: 16000))
        #expect(device.captureSettings?.format.sampleType == .int16)
    }

    @Test func anUnreachableSoundServerIsReportedForThatDevice() throws {
        let name = "voiceio_pulse_capture:SERVER=\"unix:/nonexistent/voiceio/native\""
        let error = try Self.openError(ALSADevice(name: name, config: try ALSATestSupport.config()))
        #expect(error.description.hasPrefix("alsa:\(name): cannot open capture PCM: "))
        #expect(error.reason == "Connection refused")
    }

    @Test func aBusyDeviceReadsAsAlsaLibSaysIt() {
        let error = ALSAError("open playback PCM", deviceName: "hw:0,0", code: -16)
        #expect(error.isBusy)
        #expect(error.description == "alsa:hw:0,0: cannot open playback PCM: Device or resource busy")
    }

    @Test func startingBeforeOpeningThrows() throws {
        let device = ALSADevice(name: "voiceio_mulaw_only", config: try ALSATestSupport.config())
        #expect(throws: ALSAError.self) { try device.start { _, _ in } }
    }

    @Test func theDeviceListHasAlsaLibsBuiltInPCMs() throws {
        let pcms = try ALSADeviceList.pcms()
        let null = try #require(pcms.first { $0.name == "null" }, "hints: \(pcms.map(\.name))")
        #expect(null.canPlay && null.canCapture)
        #expect(!null.description.isEmpty)
    }
}
