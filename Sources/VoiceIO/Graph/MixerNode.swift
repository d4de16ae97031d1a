#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A multichannel mixer (after Apple's Multichannel Mixer): `inputBusCount` input buses of mono or stereo, each
/// with volume, pan and enable, ramped to every change; an output volume; peak and RMS meters per bus and for the
/// output, readable from any thread.
///
/// Parameters may be set from any thread at any time (real-time safe: relaxed atomics); the render thread reads
/// them at the start of each slice and ramps to them over the bus's ramp time, so no change makes a step. A
/// source connected to a bus fades in over the ramp; disconnecting cuts it (fade it with `setEnabled` first).
public final class MixerNode: AudioNode, @unchecked Sendable {
    /// What every input bus takes.
    public let busFormat: StreamFormat
    /// Unsafe storage: array access goes through coroutines that allocate unoptimised.
    private let controls: UnsafeMutableBufferPointer<MixerBusControl>
    private let outputControl: MixerBusControl
    /// Real-time side: per-bus gain per output channel now, its step per frame and frames left in the ramp.
    private let gains: UnsafeMutableBufferPointer<Float>
    private let steps: UnsafeMutableBufferPointer<Float>
    private let rampFramesLeft: UnsafeMutableBufferPointer<Int>
    private let targets: UnsafeMutableBufferPointer<Float>
    private var outputGain: Float = 1
    private var outputTarget: Float = 1
    private var outputStep: Float = 0
    private var outputRampLeft = 0

    /// `outputFormat` and `busFormat` share a rate; each has one or two channels. Not real-time safe.
    public init(name: String = "mixer", inputBusCount: Int, busFormat: StreamFormat, outputFormat: StreamFormat)
        throws(AudioGraphError) {
        guard inputBusCount > 0 else { throw .invalidParameter("a mixer needs at least one input bus") }
        guard busFormat.sampleRate == outputFormat.sampleRate,
              busFormat.sampleType == .float32, outputFormat.sampleType == .float32,
              (1...2).contains(busFormat.channelCount), (1...2).contains(outputFormat.channelCount) else {
            throw .invalidParameter("a mixer takes Float32 mono or stereo buses at its output rate "
                + "(\(busFormat) -> \(outputFormat))")
        }
        self.busFormat = busFormat
        controls = .allocate(capacity: inputBusCount)
        _ = controls.initialize(from: (0..<inputBusCount).map { _ in MixerBusControl() })
        outputControl = MixerBusControl()
        let channelGains = inputBusCount * outputFormat.channelCount
        gains = .allocate(capacity: channelGains)
        gains.initialize(repeating: 0)
        steps = .allocate(capacity: channelGains)
        steps.initialize(repeating: 0)
        targets = .allocate(capacity: channelGains)
        targets.initialize(repeating: 0)
        rampFramesLeft = .allocate(capacity: inputBusCount)
        rampFramesLeft.initialize(repeating: 0)
        super.init(name: name, outputFormat: outputFormat, inputBusCount: inputBusCount)
    }

    deinit {
        controls.deinitialize()
        controls.deallocate()
        gains.deallocate()
        steps.deallocate()
        targets.deallocate()
        rampFramesLeft.deallocate()
    }

    override func inputFormat(bus: Int) -> StreamFormat { busFormat }

    // MARK: Parameters (any thread; real-time safe)

    /// Sets bus `bus`'s volume (linear, 0...4), reached over `rampMilliseconds`.
    public func setVolume(_ volume: Float, bus: Int, rampMilliseconds: Double = 20) {
        control(bus).set(volume: volume, rampMilliseconds: rampMilliseconds)
    }

    /// Sets bus `bus`'s volume in dB (-120 or lower is silence).
    public func setVolume(decibels: Float, bus: Int, rampMilliseconds: Double = 20) {
        setVolume(decibels <= Level.floorDBFS ? 0 : Float(pow(10, Double(decibels) / 20)), bus: bus,
                  rampMilliseconds: rampMilliseconds)
    }

    public func volume(bus: Int) -> Float { control(bus).volume.load() }

    /// Sets bus `bus`'s pan, -1 (left) ... 0 (centre, -3 dB each side) ... 1 (right): equal power. Mono output
    /// ignores it.
    public func setPan(_ pan: Float, bus: Int, rampMilliseconds: Double = 20) {
        control(bus).set(pan: pan, rampMilliseconds: rampMilliseconds)
    }

    public func pan(bus: Int) -> Float { control(bus).pan.load() }

    /// Enables or mutes bus `bus` (ramped like a volume change).
    public func setEnabled(_ enabled: Bool, bus: Int, rampMilliseconds: Double = 20) {
        control(bus).set(enabled: enabled, rampMilliseconds: rampMilliseconds)
    }

    public func isEnabled(bus: Int) -> Bool { control(bus).enabled.load(ordering: .relaxed) }

    /// The output volume (linear, 0...4).
    public func setOutputVolume(_ volume: Float, rampMilliseconds: Double = 20) {
        outputControl.set(volume: volume, rampMilliseconds: rampMilliseconds)
    }

    public var outputVolume: Float { outputControl.volume.load() }

    /// What bus `bus` put into the mix over the last slice (after volume and pan, channels averaged).
    public func inputLevel(bus: Int) -> Level { control(bus).level }

    /// What bus `bus` put into the mix since the graph started, as a mean RMS in dBFS.
    public func meanInputLevelDBFS(bus: Int) -> Float { control(bus).meanRMSDBFS.load() }

    /// The mix over the last slice (after the output volume).
    public var outputLevel: Level { outputControl.level }

    private func control(_ bus: Int) -> MixerBusControl {
        precondition((0..<inputBusCount).contains(bus), "\(name) has no bus \(bus)")
        return controls[bus]
    }

    // MARK: Rendering

    override func render(inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, frameCount: Int, sampleTime: Int) {
        let outChannels = outputFormat!.channelCount
        let inChannels = busFormat.channelCount
        let mix = output.baseAddress!
        mix.update(repeating: 0, count: frameCount * outChannels)
        let rate = Float(busFormat.sampleRate)
        for bus in 0..<inputBusCount {
            let control = controls[bus]
            let first = bus * outChannels
            guard let input = inputs[bus] else {
                settle(first: first, channels: outChannels, bus: bus)
                control.publish(sumOfSquares: 0, peak: 0, samples: frameCount)
                continue
            }
            retarget(control, first: first, channels: outChannels, rate: rate, bus: bus)
            var sumOfSquares: Float = 0
            var peak: Float = 0
            for frame in 0..<frameCount {
                let ramping = rampFramesLeft[bus] > 0
                if ramping { rampFramesLeft[bus] -= 1 }
                var frameSquares: Float = 0
                for channel in 0..<outChannels {
                    let gainIndex = first + channel
                    gains[gainIndex] = ramping ? gains[gainIndex] + steps[gainIndex] : targets[gainIndex]
                    let sample: Float
                    if inChannels == outChannels {
                        sample = input[frame * inChannels + channel]
                    } else if inChannels == 1 {
                        sample = input[frame]
                    } else {
                        sample = 0.5 * (input[frame * 2] + input[frame * 2 + 1])
                    }
                    let contribution = sample * gains[gainIndex]
                    mix[frame * outChannels + channel] += contribution
                    frameSquares += contribution * contribution
                    peak = max(peak, abs(contribution))
                }
                sumOfSquares += frameSquares / Float(outChannels)
            }
            control.publish(sumOfSquares: sumOfSquares, peak: peak, samples: frameCount)
        }
        renderOutputVolume(mix: mix, frameCount: frameCount, channels: outChannels, rate: rate)
    }

    /// Reads a bus's parameters and starts a ramp when its target gains moved.
    private func retarget(_ control: MixerBusControl, first: Int, channels: Int, rate: Float, bus: Int) {
        let volume = control.enabled.load(ordering: .relaxed) ? control.volume.load() : 0
        var newTargets = (volume, volume)
        if channels == 2 {
            let angle = (min(max(control.pan.load(), -1), 1) + 1) * Float.pi / 4
            newTargets = (volume * cos(angle), volume * sin(angle))
        }
        let changed = targets[first] != newTargets.0 || (channels == 2 && targets[first + 1] != newTargets.1)
        guard changed else { return }
        let rampFrames = max(Int(control.rampMilliseconds.load() * rate / 1000), 1)
        targets[first] = newTargets.0
        if channels == 2 { targets[first + 1] = newTargets.1 }
        for channel in 0..<channels {
            steps[first + channel] = (targets[first + channel] - gains[first + channel]) / Float(rampFrames)
        }
        rampFramesLeft[bus] = rampFrames
    }

    /// An unconnected bus rests at zero gain, so a source connected later fades in over the ramp.
    private func settle(first: Int, channels: Int, bus: Int) {
        rampFramesLeft[bus] = 0
        for channel in 0..<channels {
            gains[first + channel] = 0
            targets[first + channel] = 0
        }
    }

    private func renderOutputVolume(mix: UnsafeMutablePointer<Float>, frameCount: Int, channels: Int, rate: Float) {
        let target = outputControl.volume.load()
        if target != outputTarget {
            outputTarget = target
            outputRampLeft = max(Int(outputControl.rampMilliseconds.load() * rate / 1000), 1)
            outputStep = (target - outputGain) / Float(outputRampLeft)
        }
        var sumOfSquares: Float = 0
        var peak: Float = 0
        for frame in 0..<frameCount {
            if outputRampLeft > 0 {
                outputRampLeft -= 1
                outputGain = outputRampLeft > 0 ? outputGain + outputStep : outputTarget
            }
            for channel in 0..<channels {
                let sample = mix[frame * channels + channel] * outputGain
                mix[frame * channels + channel] = sample
                sumOfSquares += sample * sample
                peak = max(peak, abs(sample))
            }
        }
        outputControl.publish(sumOfSquares: sumOfSquares, peak: peak, samples: frameCount * channels)
    }
}

/// One mixer bus's parameters and meter, shared between the setting threads and the render thread.
final class MixerBusControl: Sendable {
    let volume = AtomicFloat(1)
    let pan = AtomicFloat(0)
    let enabled = Atomic<Bool>(true)
    let rampMilliseconds = AtomicFloat(20)
    private let rmsDBFS = AtomicFloat(Level.floorDBFS)
    private let peakDBFS = AtomicFloat(Level.floorDBFS)
    let meanRMSDBFS = AtomicFloat(Level.floorDBFS)
    /// Render side: the sum of squares and samples since the first slice.
    private nonisolated(unsafe) var totalSquares = 0.0
    private nonisolated(unsafe) var totalSamples = 0

    func set(volume: Float, rampMilliseconds ramp: Double) {
        rampMilliseconds.store(Float(max(ramp, 0)))
        self.volume.store(min(max(volume, 0), 4))
    }

    func set(pan: Float, rampMilliseconds ramp: Double) {
        rampMilliseconds.store(Float(max(ramp, 0)))
        self.pan.store(min(max(pan, -1), 1))
    }

    func set(enabled: Bool, rampMilliseconds ramp: Double) {
        rampMilliseconds.store(Float(max(ramp, 0)))
        self.enabled.store(enabled, ordering: .relaxed)
    }

    var level: Level { Level(rmsDBFS: rmsDBFS.load(), peakDBFS: peakDBFS.load()) }

    /// Real-time safe.
    func publish(sumOfSquares: Float, peak: Float, samples: Int) {
        rmsDBFS.store(LevelMeter.dBFS(amplitude: Double((sumOfSquares / Float(max(samples, 1))).squareRoot())))
        peakDBFS.store(LevelMeter.dBFS(amplitude: Double(peak)))
        totalSquares += Double(sumOfSquares)
        totalSamples += samples
        meanRMSDBFS.store(LevelMeter.dBFS(amplitude: (totalSquares / Double(max(totalSamples, 1))).squareRoot()))
    }
}
