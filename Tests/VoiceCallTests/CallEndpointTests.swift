import CAllocCounter
import Foundation
import Testing
import VoiceIO
import VoiceIOSimulation
@testable import VoiceCall

@Suite struct CallEndpointTests {
    /// An endpoint on a simulated room (virtual clock, run period by period in real time) with every recording
    /// and the ground-truth meter, against a plain session on loopback.
    final class Fixture {
        let room: SimulatedRoom
        let endpoint: CallEndpoint
        let remote: CallSession
        let directory: String

        init(voiceRate: Int = 16000) throws {
            var configuration = SimulatedRoomConfiguration()
            configuration.clock = .virtual
            configuration.nearTalker = TestSignals.voice(sampleRate: 48000, frameCount: 48000)
            room = try SimulatedRoom(configuration: configuration)
            directory = NSTemporaryDirectory() + "endpoint-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let remoteSocket = try UDPSocket(binding: "127.0.0.1:0")
            var call = CallConfiguration(remote: remoteSocket.localAddress)
            call.voiceRate = voiceRate
            endpoint = try CallEndpoint(
                device: room, listen: try SocketAddress.resolve("127.0.0.1:0"), configuration: call,
                recordings: CallRecordingPaths(sent: directory + "/sent.wav", microphone: directory + "/mic.wav",
                                               farEnd: directory + "/far.wav", loudspeaker: directory + "/speaker.wav"))
            var remoteConfiguration = CallConfiguration(remote: endpoint.session.localAddress)
            remoteConfiguration.voiceRate = voiceRate
            remote = try CallSession(socket: remoteSocket, configuration: remoteConfiguration)
            try remote.start()
            try endpoint.start()
        }

        deinit {
            endpoint.stop()
            remote.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// The endpoint's audio path (the unit's callbacks into the session, four recorders, the ERLE meters, mute)
    /// allocates nothing per period while packets flow both ways; a positive control shows the counter counts.
    @Test(arguments: [16000, 11025])
    func audioPathDoesNotAllocate(voiceRate: Int) throws {
        let fixture = try Fixture(voiceRate: voiceRate)
        let blockFrames = voiceRate / 100
        let voice = TestSignals.voice(sampleRate: voiceRate, frameCount: blockFrames)
        var out = [Float](repeating: 0, count: blockFrames)
        var failure: (any Error)?
        let (steady, afterChanges, control) = voice.withUnsafeBufferPointer { voice in
            out.withUnsafeMutableBufferPointer { out in
                var counts: (UInt64, UInt64, UInt64) = (0, 0, 0)
                runInRealTime(periods: 150) { period in
                    if period == 40 || period == 100 { alloc_counter_start() }
                    do { try fixture.room.run(periods: 1) } catch { failure = error }
                    fixture.remote.sendCaptured(voice)
                    fixture.remote.renderReceived(into: out)
                    if period == 79 { counts.0 = alloc_counter_stop() }
                    if period == 80 {
                        fixture.endpoint.isMicrophoneMuted = true
                        fixture.endpoint.isSpeakerMuted = true
                    }
                    if period == 139 { counts.1 = alloc_counter_stop() }
                    if period == 140 {
                        alloc_counter_start()
                        _ = Array(repeating: period, count: 3)
                        counts.2 = alloc_counter_stop()
                    }
                }
                return counts
            }
        }
        #expect(failure == nil)
        #expect(steady == 0, "allocations in 40 periods: \(steady)")
        #expect(afterChanges == 0, "allocations in 40 periods after mute: \(afterChanges)")
        #expect(control > 0, "the counter counts")
        let statistics = fixture.endpoint.statistics
        #expect(statistics.unit.periodCount == 150)
        #expect(statistics.call.jitterBuffer.received > 0)
        #expect(statistics.echoGroundTruth != nil)
    }

    /// The report holds the recordings, the toggles and a plausible quality estimate, and survives JSON.
    @Test func reportsTheCall() throws {
        let fixture = try Fixture()
        let voice = TestSignals.voice(sampleRate: 16000, frameCount: 160)
        var out = [Float](repeating: 0, count: 160)
        try voice.withUnsafeBufferPointer { voice in
            try out.withUnsafeMutableBufferPointer { out in
                for period in 0..<100 {
                    try fixture.room.run(periods: 1)
                    fixture.remote.sendCaptured(voice)
                    fixture.remote.renderReceived(into: out)
                    if period == 50 { fixture.endpoint.toggleBypass(source: "test") }
                    usleep(10_000)
                }
            }
        }
        fixture.endpoint.stop()
        let report = fixture.endpoint.report(stopReason: "done")
        #expect(report.bypass && report.bypassToggles == 1)
        #expect(report.unit.periodCount == 100)
        #expect(Set(report.recordings.map(\.role)) == ["microphone", "loudspeaker", "sent", "far end"])
        let microphone = try #require(report.recordings.first { $0.role == "microphone" })
        #expect(microphone.frames == 100 * 480 && microphone.firstFrameSeconds != nil)
        #expect(report.quality.rFactor > 80 && report.quality.rFactor < 93.3)
        #expect(report.latency.mouthToEarMilliseconds > report.latency.frameMilliseconds)
        let events = try String(contentsOfFile: fixture.directory + "/sent.wav.events", encoding: .utf8)
        #expect(events.hasSuffix("\tbypass on\ttest\n"))
        let decoded = try ReportJSON.decode(CallReport.self, from: try ReportJSON.encode(report))
        #expect(decoded == report)
    }
}
