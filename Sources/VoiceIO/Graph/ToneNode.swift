#if canImport(Glibc)
import Glibc
#endif

/// A cadence of summed sine tones: a ringtone, a dial tone, a beep.
public struct TonePattern: Sendable, Hashable {
    /// Up to four frequencies played together, in hertz.
    public var frequencies: [Double]
    /// Peak amplitude of the sum (full scale 1).
    public var amplitude: Float
    /// Tone on, then silence, repeated; `offMilliseconds` 0 plays continuously.
    public var onMilliseconds: Double
    public var offMilliseconds: Double

    public init(frequencies: [Double], amplitude: Float, onMilliseconds: Double, offMilliseconds: Double) {
        self.frequencies = frequencies
        self.amplitude = amplitude
        self.onMilliseconds = onMilliseconds
        self.offMilliseconds = offMilliseconds
    }

    /// A North American ring: 440 + 480 Hz, 2 s on, 4 s off.
    public static let ringtone = TonePattern(frequencies: [440, 480], amplitude: 0.25, onMilliseconds: 2000,
                                             offMilliseconds: 4000)
}

/// Generates a `TonePattern` (mono, or the same on every channel), with 5 ms fades at each on/off edge so the
/// cadence does not click. Render is real-time safe.
public final class ToneNode: AudioNode, @unchecked Sendable {
    public let pattern: TonePattern
    /// Radians per frame of each frequency (unsafe storage: array iteration allocates unoptimised).
    private let phaseSteps: UnsafeMutableBufferPointer<Double>
    private let onFrames: Int
    private let cycleFrames: Int
    private let fadeFrames: Int

    public init(name: String = "tone", format: StreamFormat, pattern: TonePattern) throws(AudioGraphError) {
        guard (1...4).contains(pattern.frequencies.count),
              pattern.frequencies.allSatisfy({ $0 > 0 && $0 < Double(format.sampleRate) / 2 }),
              pattern.onMilliseconds > 0, pattern.offMilliseconds >= 0, format.sampleType == .float32 else {
            throw .invalidParameter("a tone needs 1-4 frequencies below \(format.sampleRate / 2) Hz and a positive on time")
        }
        self.pattern = pattern
        phaseSteps = .allocate(capacity: pattern.frequencies.count)
        _ = phaseSteps.initialize(from: pattern.frequencies.map { 2 * Double.pi * $0 / Double(format.sampleRate) })
        onFrames = max(format.frameCount(milliseconds: pattern.onMilliseconds), 1)
        cycleFrames = onFrames + format.frameCount(milliseconds: pattern.offMilliseconds)
        fadeFrames = min(format.frameCount(milliseconds: 5), onFrames / 2)
        super.init(name: name, outputFormat: format, inputBusCount: 0)
    }

    deinit { phaseSteps.deallocate() }

    override func render(inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, frameCount: Int, sampleTime: Int) {
        let channels = outputFormat!.channelCount
        let scale = pattern.amplitude / Float(phaseSteps.count)
        let output = self.output
        for frame in 0..<frameCount {
            let time = sampleTime + frame
            let position = cycleFrames == onFrames ? fadeFrames : time % cycleFrames
            var sample: Float = 0
            if position < onFrames {
                var sum = 0.0
                for index in 0..<phaseSteps.count { sum += sin(phaseSteps[index] * Double(time)) }
                let edge = min(position, onFrames - 1 - position)
                let fade = edge < fadeFrames ? Float(edge) / Float(max(fadeFrames, 1)) : 1
                sample = Float(sum) * scale * fade
            }
            for channel in 0..<channels { output[frame * channels + channel] = sample }
        }
    }
}

/// A source whose samples come from a closure on the render thread (after Apple's per-bus render callback).
/// The closure gets the interleaved slice to fill and the graph's sample time; it must be real-time safe.
public final class RenderCallbackNode: AudioNode, @unchecked Sendable {
    public typealias Callback = (_ frames: UnsafeMutableBufferPointer<Float>, _ sampleTime: Int) -> Void
    private let callback: Callback

    public init(name: String = "callback", format: StreamFormat, callback: @escaping Callback) {
        self.callback = callback
        super.init(name: name, outputFormat: format, inputBusCount: 0)
    }

    override func render(inputs: UnsafeBufferPointer<UnsafePointer<Float>?>, frameCount: Int, sampleTime: Int) {
        callback(UnsafeMutableBufferPointer(rebasing: output[..<(frameCount * outputFormat!.channelCount)]), sampleTime)
    }
}
