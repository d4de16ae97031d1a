import Benchmark
import VoiceCall
import VoiceIO
import VoiceIOSimulation

/// VoiceIO's hot kernels at 16 kHz voice (48 kHz device): one sample is 1000 iterations of one 10 ms block (or
/// one 20 ms packet), so times read as milliseconds per 1000 blocks = microseconds per block. Each object is
/// built before `startMeasurement`, so the figures cover the per-block work only, and the malloc count per
/// sample is the harness's own (16) unless a kernel allocates. Run by `scripts/bench`, or
/// `swift package benchmark` in this folder; `Thresholds/` holds the p90 figures `thresholds check` compares with
/// (names without spaces or punctuation: the tool looks the files up by the raw name). MDF: our filter (BlockAdaptiveFilter),
/// 200 ms; EchoPipelineBlock: MDF + residual echo suppressor + speexdsp noise suppression; the jitter buffer
/// push + pull includes the Opus decode.
let benchmarks: @Sendable () -> Void = {
    let voiceRate = 16000
    let blockFrames = voiceRate / 100
    // Wall-clock time on a shared 2-core machine swings by 2x under other builds (and CPU time, counted in 10 ms
    // ticks, is too coarse to check): a kernel fails the check when its p90 is 3x the stored figure (a gross
    // regression); one allocation per 1000 blocks on a real-time kernel fails it at once.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal],
        timeUnits: .milliseconds,
        warmupIterations: 1,
        scalingFactor: .kilo,
        maxDuration: .seconds(3),
        maxIterations: 30,
        thresholds: [.wallClock: .init(relative: [.p90: 200]), .mallocCountTotal: .init(absolute: [.p90: 0])]
    )

    /// Ten seconds of speech-like far end and its echo through a 200 ms room, plus a quieter near talker.
    let seconds = 10
    let far = SyntheticAudio.speechLike(sampleRate: voiceRate, frameCount: seconds * voiceRate, amplitude: 0.3)
    let room = SyntheticAudio.echoPath(sampleRate: voiceRate, delayMilliseconds: 5, tailMilliseconds: 200, gain: 0.5)
    let near = SyntheticAudio.speechLike(sampleRate: voiceRate, frameCount: seconds * voiceRate, amplitude: 0.1,
                                         seed: 9)
    let microphone = zip(SyntheticAudio.convolve(far, with: room), near).map { $0 + $1 }
    let blockCount = far.count / blockFrames
    func int16(_ samples: [Float]) -> [Int16] { samples.map { Int16(max(-32768, min(32767, $0 * 32768))) } }
    let far16 = int16(far), microphone16 = int16(microphone)

    Benchmark("MDFBlock200ms") { benchmark in
        let canceller = try! EchoCanceller(frameCount: blockFrames, filterLengthMilliseconds: 200, sampleRate: voiceRate)
        var output = [Int16](repeating: 0, count: blockFrames)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let start = (iteration % blockCount) * blockFrames
            microphone16.withUnsafeBufferPointer { mic in
                far16.withUnsafeBufferPointer { ref in
                    output.withUnsafeMutableBufferPointer { out in
                        canceller.process(microphone: mic.baseAddress! + start, reference: ref.baseAddress! + start,
                                          output: out.baseAddress!)
                    }
                }
            }
        }
        blackHole(output)
    }

    Benchmark("SuppressorBlock") { benchmark in
        let suppressor = ResidualEchoSuppressor(sampleRate: voiceRate, blockFrameCount: blockFrames, longestLateDelayBlocks: 20)
        var output = [Float](repeating: 0, count: blockFrames)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let start = (iteration % blockCount) * blockFrames
            for index in 0..<blockFrames { output[index] = near[start + index] }
            microphone.withUnsafeBufferPointer { mic in
                far.withUnsafeBufferPointer { ref in
                    output.withUnsafeMutableBufferPointer { out in
                        suppressor.process(output: out,
                                           echoEstimate: UnsafeBufferPointer(rebasing: mic[start..<start + blockFrames]),
                                           reference: UnsafeBufferPointer(rebasing: ref[start..<start + blockFrames]))
                    }
                }
            }
        }
        blackHole(output)
    }

    Benchmark("EchoPipelineBlock") { benchmark in
        let pipeline = try! EchoPipeline(sampleRate: voiceRate, blockFrameCount: blockFrames)
        var output = [Float](repeating: 0, count: blockFrames)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let block = (iteration % blockCount) * blockFrames..<((iteration % blockCount) + 1) * blockFrames
            microphone.withUnsafeBufferPointer { mic in
                far.withUnsafeBufferPointer { ref in
                    output.withUnsafeMutableBufferPointer { out in
                        blackHole(pipeline.process(microphone: UnsafeBufferPointer(rebasing: mic[block]),
                                                   reference: UnsafeBufferPointer(rebasing: ref[block]), output: out))
                    }
                }
            }
        }
    }

    Benchmark("RealFFT512ForwardInverse") { benchmark in
        let fft = RealFFT(frameCount: 512)
        var real = [Float](repeating: 0, count: fft.binCount), imaginary = real
        var output = [Float](repeating: 0, count: 512)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            far.withUnsafeBufferPointer { input in
                real.withUnsafeMutableBufferPointer { re in
                    imaginary.withUnsafeMutableBufferPointer { im in
                        fft.forward(input.baseAddress!, real: re.baseAddress!, imaginary: im.baseAddress!)
                        output.withUnsafeMutableBufferPointer {
                            fft.inverse(real: re.baseAddress!, imaginary: im.baseAddress!, output: $0.baseAddress!)
                        }
                    }
                }
            }
        }
        blackHole(output)
    }

    Benchmark("Resampler48kTo16k") { benchmark in
        let resampler = try! Resampler(inputRate: 48000, outputRate: voiceRate, quality: 5)
        let input = SyntheticAudio.speechLike(sampleRate: 48000, frameCount: 480)
        var output = [Float](repeating: 0, count: resampler.maximumOutputFrames(inputFrames: 480))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            input.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { blackHole(resampler.process(input: source, output: $0)) }
            }
        }
    }

    // A 44.1 kHz device's capture conversion: speexdsp's filter from a table of its phases (PolyphaseDecimator;
    // 48 kHz converts with speexdsp's resampler, as above).
    Benchmark("CaptureConverter44kTo16k") { benchmark in
        let converter = try! RateConverter(inputRate: 44100, outputRate: voiceRate, maximumInputFrames: 441)
        let input = SyntheticAudio.speechLike(sampleRate: 44100, frameCount: 441)
        var output = [Float](repeating: 0, count: converter.maximumOutputFrames)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            input.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { blackHole(converter.convert(source, into: $0)) }
            }
        }
    }

    // Opus at 24 kbit/s, 20 ms packets: complexity 9 (the default) and 5 (the cheaper setting).
    let packetFrames = voiceRate / 50
    for complexity in [9, 5] {
        Benchmark("OpusEncode20msComplexity\(complexity)") { benchmark in
            let format = try! OpusFormat(sampleRate: voiceRate)
            let encoder = try! OpusEncoder(.init(format: format, complexity: complexity))
            var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketByteCount)
            benchmark.startMeasurement()
            for iteration in benchmark.scaledIterations {
                let start = (iteration % (far.count / packetFrames)) * packetFrames
                far.withUnsafeBufferPointer { pcm in
                    packet.withUnsafeMutableBytes {
                        blackHole(try! encoder.encode(UnsafeBufferPointer(rebasing: pcm[start..<start + packetFrames]),
                                                      into: $0))
                    }
                }
            }
        }
    }

    /// Twenty seconds of 20 ms Opus packets of the far end (complexity 9), for the decoder and jitter buffer.
    func encodedPackets() -> [[UInt8]] {
        let encoder = try! OpusEncoder(.init(format: try! OpusFormat(sampleRate: voiceRate)))
        var packet = [UInt8](repeating: 0, count: OpusEncoder.maxPacketByteCount)
        return (0..<far.count / packetFrames).map { index in
            let count = far.withUnsafeBufferPointer { pcm in
                packet.withUnsafeMutableBytes {
                    try! encoder.encode(UnsafeBufferPointer(rebasing: pcm[index * packetFrames..<(index + 1) * packetFrames]),
                                        into: $0)
                }
            }
            return Array(packet[..<count])
        }
    }

    let packets = encodedPackets()
    Benchmark("OpusDecode20ms") { benchmark in
        let decoder = try! OpusDecoder(sampleRate: voiceRate)
        var pcm = [Float](repeating: 0, count: packetFrames)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            packets[iteration % packets.count].withUnsafeBytes { packet in
                pcm.withUnsafeMutableBufferPointer { blackHole(try! decoder.decode(packet, into: $0)) }
            }
        }
    }

    Benchmark("JitterBufferPushPull20ms") { benchmark in
        let jitter = try! JitterBuffer(sampleRate: voiceRate)
        var pcm = [Float](repeating: 0, count: packetFrames)
        let ticksPerPacket = Int64(OpusFormat.rtpClockRate / 50)
        benchmark.startMeasurement()
        for iteration in benchmark.scaledIterations {
            let header = RTPHeader(sequenceNumber: UInt16(truncatingIfNeeded: iteration),
                                   timestamp: UInt32(truncatingIfNeeded: iteration * Int(ticksPerPacket)), ssrc: 1)
            let now = Int64(iteration) * ticksPerPacket
            packets[iteration % packets.count].withUnsafeBytes { payload in
                jitter.push(RTPPacket(header: header, payload: payload), arrivalTicks: now)
            }
            pcm.withUnsafeMutableBufferPointer { jitter.pull(into: $0, nowTicks: now) }
        }
        blackHole(pcm)
    }
}
