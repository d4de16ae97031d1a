import CAllocCounter
import Foundation
import Testing
@testable import VoiceIO
import VoiceIOSimulation

/// A constant or sine source for graph tests, as a render-callback node. Real-time safe.
private func sineNode(_ name: String, format: StreamFormat, frequency: Double, amplitude: Float) -> RenderCallbackNode {
    RenderCallbackNode(name: name, format: format) { frames, sampleTime in
        let step = 2 * Double.pi * frequency / Double(format.sampleRate)
        for index in frames.indices { frames[index] = amplitude * Float(sin(step * Double(sampleTime + index))) }
    }
}

private func constantNode(_ name: String, format: StreamFormat, value: Float) -> RenderCallbackNode {
    RenderCallbackNode(name: name, format: format) { frames, _ in frames.update(repeating: value) }
}

/// Renders `seconds` of a started graph in `sliceFrames` slices; returns the interleaved samples.
private func render(_ graph: AudioGraph, seconds: Double, channels: Int, sliceFrames: Int = 480,
                    sampleRate: Int = 48000) -> [Float] {
    var result: [Float] = []
    var slice = [Float](repeating: 0, count: sliceFrames * channels)
    for _ in 0..<Int(seconds * Double(sampleRate)) / sliceFrames {
        slice.withUnsafeMutableBufferPointer { graph.render(into: $0) }
        result += slice
    }
    return result
}

private func channelPowerDB(_ samples: [Float], channel: Int, channels: Int, fromFrame: Int) -> Double {
    var sum = 0.0
    var count = 0
    var index = fromFrame * channels + channel
    while index < samples.count {
        sum += Double(samples[index] * samples[index])
        count += 1
        index += channels
    }
    return 10 * log10(max(sum / Double(max(count, 1)), 1e-20))
}

@Suite("Audio graph")
struct AudioGraphTests {
    let mono = try! StreamFormat(sampleRate: 48000)
    let stereo = try! StreamFormat(sampleRate: 48000, channelCount: 2)

    @Test("each bus's level at the output follows its volume and pan within 0.5 dB, and its meter agrees")
    func volumeAndPan() throws {
        let mixer = try MixerNode(inputBusCount: 3, busFormat: mono, outputFormat: stereo)
        let output = GraphOutputNode(format: stereo)
        let graph = AudioGraph(maximumFrameCount: 480)
        for bus in 0..<3 {
            try graph.connect(sineNode("sine \(bus)", format: mono, frequency: 300 + 200 * Double(bus), amplitude: 0.5),
                              to: mixer, bus: bus)
        }
        try graph.connect(mixer, to: output)
        try graph.initialize()
        try graph.start()
        let sineDB = 20 * log10(0.5 / 2.0.squareRoot())
        for (volume, pan) in [(Float(1), Float(0)), (0.5, -1), (0.25, 0.6), (0.8, -0.3)] {
            for bus in 0..<3 {
                for other in 0..<3 { mixer.setEnabled(other == bus, bus: other, rampMilliseconds: 5) }
                mixer.setVolume(volume, bus: bus, rampMilliseconds: 5)
                mixer.setPan(pan, bus: bus, rampMilliseconds: 5)
                let samples = render(graph, seconds: 0.3, channels: 2)
                let angle = Double(pan + 1) * Double.pi / 4
                let expectedLeft = sineDB + 20 * log10(Double(volume) * cos(angle))
                let expectedRight = sineDB + 20 * log10(Double(volume) * sin(angle))
                let left = channelPowerDB(samples, channel: 0, channels: 2, fromFrame: 4800)
                let right = channelPowerDB(samples, channel: 1, channels: 2, fromFrame: 4800)
                if expectedLeft > -100 { #expect(abs(left - expectedLeft) < 0.5, "bus \(bus) v \(volume) pan \(pan): L \(left) vs \(expectedLeft)") }
                if expectedRight > -100 { #expect(abs(right - expectedRight) < 0.5, "bus \(bus) v \(volume) pan \(pan): R \(right) vs \(expectedRight)") }
                let metered = Double(mixer.inputLevel(bus: bus).rmsDBFS)
                let expectedMeter = sineDB + 20 * log10(Double(volume)) - 3.0103
                #expect(abs(metered - expectedMeter) < 0.5, "bus \(bus) meter \(metered) vs \(expectedMeter)")
            }
        }
        graph.stop()
    }

    @Test("a volume change while running ramps: no sample step larger than the ramp's")
    func rampedChange() throws {
        let mixer = try MixerNode(inputBusCount: 2, busFormat: mono, outputFormat: mono)
        let output = GraphOutputNode(format: mono)
        let graph = AudioGraph(maximumFrameCount: 480)
        try graph.connect(constantNode("dc", format: mono, value: 0.5), to: mixer, bus: 0)
        try graph.connect(mixer, to: output)
        try graph.initialize()
        try graph.start()
        var samples = render(graph, seconds: 0.1, channels: 1)
        mixer.setVolume(0.1, bus: 0, rampMilliseconds: 20)
        samples += render(graph, seconds: 0.1, channels: 1)
        mixer.setOutputVolume(2, rampMilliseconds: 10)
        mixer.setEnabled(false, bus: 0, rampMilliseconds: 30)
        samples += render(graph, seconds: 0.1, channels: 1)
        let steps = zip(samples.dropFirst(), samples).map { abs($0 - $1) }
        // Fastest allowed: 0.5 × 0.9 over 960 frames (volume), 0.05 × 1 over 480 frames (output volume), and
        // the bus fade 0.1 × 0.5 × 2 over 1440 frames; the first ramp (0 → 1 over 20 ms) is 0.5 / 960.
        let bound: Float = 0.5 / 960 * 1.05
        #expect((steps.max() ?? 1) <= bound, "largest step \(steps.max() ?? 1), bound \(bound)")
        #expect(abs(samples[4799 + 4800] - 0.05) < 1e-4, "after the volume ramp: \(samples[9599])")
        #expect(abs(samples.last ?? 1) < 1e-6, "after disabling the bus: \(samples.last ?? 1)")
    }

    @Test("connections changed while running take over at a slice boundary")
    func reconnectWhileRunning() throws {
        let mixer = try MixerNode(inputBusCount: 2, busFormat: mono, outputFormat: mono)
        let output = GraphOutputNode(format: mono)
        let graph = AudioGraph(maximumFrameCount: 480)
        try graph.connect(constantNode("a", format: mono, value: 0.25), to: mixer, bus: 0)
        try graph.connect(mixer, to: output)
        try graph.initialize()
        try graph.start()
        _ = render(graph, seconds: 0.05, channels: 1)
        try graph.connect(constantNode("b", format: mono, value: 0.125), to: mixer, bus: 1)
        try graph.update()
        let after = render(graph, seconds: 0.1, channels: 1)
        // Bus 1 fades in from the slice boundary over 20 ms.
        #expect(abs(after[0] - (0.25 + 0.125 / 960)) < 1e-5, "first sample after update \(after[0])")
        #expect(abs(after.last! - 0.375) < 1e-5)
        graph.disconnect(mixer, bus: 0)
        try graph.update()
        let removed = render(graph, seconds: 0.01, channels: 1)
        #expect(abs(removed[0] - 0.125) < 1e-5)
    }

    @Test("bad graphs give typed errors")
    func badGraphs() throws {
        let mixer = try MixerNode(inputBusCount: 2, busFormat: mono, outputFormat: mono)
        let other = try MixerNode(name: "other", inputBusCount: 1, busFormat: mono, outputFormat: mono)
        let output = GraphOutputNode(format: mono)
        let slow = try StreamFormat(sampleRate: 44100)

        let outOfRange = AudioGraph(maximumFrameCount: 480)
        #expect {
            try outOfRange.connect(constantNode("c", format: mono, value: 0), to: mixer, bus: 2)
        } throws: { error in
            guard case AudioGraphError.busOutOfRange(_, 2, 2) = error else { return false }
            return true
        }

        let mismatch = AudioGraph(maximumFrameCount: 480)
        try mismatch.connect(constantNode("slow", format: slow, value: 0), to: mixer, bus: 0)
        try mismatch.connect(mixer, to: output)
        #expect { try mismatch.initialize() } throws: { error in
            guard case AudioGraphError.formatMismatch("slow", "mixer", 0, _, _) = error else { return false }
            return true
        }

        let cyclic = AudioGraph(maximumFrameCount: 480)
        let first = try MixerNode(name: "first", inputBusCount: 2, busFormat: mono, outputFormat: mono)
        let second = try MixerNode(name: "second", inputBusCount: 1, busFormat: mono, outputFormat: mono)
        let end = try MixerNode(name: "end", inputBusCount: 1, busFormat: mono, outputFormat: mono)
        try cyclic.connect(first, to: second)
        try cyclic.connect(second, to: first, bus: 1)
        try cyclic.connect(constantNode("c", format: mono, value: 0), to: first)
        try cyclic.connect(end, to: GraphOutputNode(format: mono))
        #expect { try cyclic.initialize() } throws: { error in
            guard case AudioGraphError.cycle(let nodes) = error else { return false }
            return Set(nodes) == ["first", "second"]
        }

        #expect { try cyclic.connect(mixer, to: end) } throws: { error in
            guard case AudioGraphError.nodeInOtherGraph("mixer") = error else { return false }
            return true
        }

        let twice = AudioGraph(maximumFrameCount: 480)
        let source = constantNode("shared", format: mono, value: 0)
        try twice.connect(source, to: other)
        try twice.connect(source, to: GraphOutputNode(format: mono))
        #expect { try twice.initialize() } throws: { error in
            guard case AudioGraphError.nodeConnectedTwice("shared") = error else { return false }
            return true
        }

        let crowded = AudioGraph(maximumFrameCount: 480)
        let sink = GraphOutputNode(format: mono)
        try crowded.connect(constantNode("x", format: mono, value: 0), to: sink)
        try crowded.connect(constantNode("y", format: mono, value: 0), to: sink)
        #expect { try crowded.initialize() } throws: { error in
            guard case AudioGraphError.busConnectedTwice("output", 0) = error else { return false }
            return true
        }

        let noSink = AudioGraph(maximumFrameCount: 480)
        try noSink.connect(constantNode("z", format: mono, value: 0),
                           to: try MixerNode(inputBusCount: 1, busFormat: mono, outputFormat: mono))
        #expect { try noSink.initialize() } throws: { error in
            guard case AudioGraphError.sinkCount(0) = error else { return false }
            return true
        }
        #expect { try AudioGraph(maximumFrameCount: 480).start() } throws: { error in
            guard case AudioGraphError.notInitialized = error else { return false }
            return true
        }
    }

    @Test("the tone node plays its cadence: on, then off")
    func toneCadence() throws {
        let pattern = TonePattern(frequencies: [440, 480], amplitude: 0.5, onMilliseconds: 100, offMilliseconds: 100)
        let tone = try ToneNode(format: mono, pattern: pattern)
        let output = GraphOutputNode(format: mono)
        let graph = AudioGraph(maximumFrameCount: 480)
        try graph.connect(tone, to: output)
        try graph.initialize()
        try graph.start()
        let samples = render(graph, seconds: 0.4, channels: 1)
        #expect(Signal.powerDB(samples, from: 960, to: 3840) > -15)
        #expect(Signal.powerDB(samples, from: 4800 + 480, to: 9600 - 480) < -100)
        #expect(Signal.powerDB(samples, from: 9600 + 960, to: 9600 + 3840) > -15)
        #expect(samples.map(abs).max()! <= 0.5)
    }

    @Test("the file player streams a region at the graph rate, starts at a sample time and loops")
    func filePlayer() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("graph-player-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        // 1 s at 16 kHz: 0.5 s of a 500 Hz tone, then 0.5 s of silence.
        let tone = SyntheticAudio.sine(frequency: 500, sampleRate: 16000, frameCount: 8000, amplitude: 0.5)
        let writer = try AudioFileWriter(path: path, format: try StreamFormat(sampleRate: 16000, sampleType: .int16))
        _ = try (tone + [Float](repeating: 0, count: 8000)).withUnsafeBufferPointer { try writer.write($0) }
        writer.close()

        let player = try FilePlayerNode(path: path, format: mono)
        #expect(player.fileFormat.sampleRate == 16000)
        try player.schedule(region: 0..<8000, loops: true, startSampleTime: 4800)
        let output = GraphOutputNode(format: mono)
        let graph = AudioGraph(maximumFrameCount: 480)
        try graph.connect(player, to: output)
        try graph.initialize()
        try graph.start()
        var samples: [Float] = []
        for _ in 0..<200 {  // 2 s, pausing so the streaming thread keeps up in a debug build
            samples += render(graph, seconds: 0.01, channels: 1)
            usleep(2000)
        }
        graph.stop()
        #expect(Signal.powerDB(samples, to: 4800) < -100, "silent before its start time")
        // Looping the tone region only: no silent half anywhere after the start.
        for second in stride(from: 0.2, to: 1.9, by: 0.1) {
            let start = Int(second * 48000)
            #expect(Signal.powerDB(samples, from: start, to: start + 2400) > -12, "at \(second) s")
        }
        let frequency = Signal.frequency(samples[24000..<48000], sampleRate: 48000)
        #expect(abs(frequency - 500) < 2, "played at \(frequency) Hz")
        #expect(player.underrunCount == 0)
    }
}

@Suite("Audio graph allocations")
struct AudioGraphAllocationTests {
    @Test("rendering each kind of node allocates nothing", arguments: ["tone", "callback", "mixer"])
    func nodeAllocations(kind: String) throws {
        let mono = try StreamFormat(sampleRate: 48000)
        let output = GraphOutputNode(format: mono)
        let graph = AudioGraph(maximumFrameCount: 480)
        switch kind {
        case "tone": try graph.connect(try ToneNode(format: mono, pattern: .ringtone), to: output)
        case "callback": try graph.connect(constantNode("c", format: mono, value: 0.1), to: output)
        default:
            let mixer = try MixerNode(inputBusCount: 2, busFormat: mono, outputFormat: mono)
            try graph.connect(constantNode("c", format: mono, value: 0.1), to: mixer)
            try graph.connect(mixer, to: output)
        }
        try graph.initialize()
        try graph.start()
        _ = render(graph, seconds: 0.02, channels: 1)
        var slice = [Float](repeating: 0, count: 480)
        alloc_counter_start()
        slice.withUnsafeMutableBufferPointer { for _ in 0..<10 { graph.render(into: $0) } }
        let allocations = alloc_counter_stop()
        #expect(allocations == 0, "\(kind): \(allocations) allocations in 10 slices")
    }
}
