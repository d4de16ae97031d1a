import Glibc
import VoiceIO

/// Echo-path impulse responses for the simulated room, at the device rate.
public enum ImpulseResponse {
    /// A direct path followed by an exponentially decaying noise tail: energy falls 60 dB in `rt60Seconds`.
    /// `directToReverberantDB` sets the direct path's energy over the tail's. Deterministic for a `seed`.
    public static func synthetic(sampleRate: Int, rt60Seconds: Double, directToReverberantDB: Double = 3,
                                 seed: UInt64 = 1) -> [Float] {
        let rt60 = max(rt60Seconds, 0.01)
        let length = max(Int(rt60 * Double(sampleRate)), 16)
        let tailStart = max(sampleRate / 500, 1)  // 2 ms after the direct path
        var random = NoiseGenerator(seed: seed)
        var response = [Float](repeating: 0, count: length)
        var tailEnergy: Double = 0
        for index in tailStart..<length {
            let envelope = exp(-6.907_755 * Double(index) / (rt60 * Double(sampleRate)))  // ln(1000): 60 dB
            let value = Double(random.nextGaussian()) * envelope
            response[index] = Float(value)
            tailEnergy += value * value
        }
        let tailScale = sqrt(pow(10, -directToReverberantDB / 10) / max(tailEnergy, 1e-12))
        for index in tailStart..<length { response[index] *= Float(tailScale) }
        response[0] = 1
        return response
    }

    /// `response` scaled so that its energy is `-erlDB` dB: white noise at the loudspeaker reaches the
    /// microphone `erlDB` dB weaker (negative values: louder, as with a laptop's speaker next to its mic).
    public static func scaled(_ response: [Float], echoReturnLossDB erlDB: Double) -> [Float] {
        let energy = response.reduce(0) { $0 + Double($1) * Double($1) }
        guard energy > 0 else { return response }
        let scale = Float(sqrt(pow(10, -erlDB / 10) / energy))
        return response.map { $0 * scale }
    }
}

/// A small deterministic noise source (xorshift64*). Real-time safe.
struct NoiseGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    /// Uniform in [-1, 1).
    mutating func nextUniform() -> Float {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let value = state &* 0x2545_F491_4F6C_DD1D
        return Float(value >> 40) / Float(1 << 23) - 1
    }

    /// Approximately normal, zero mean, unit variance (sum of four uniforms).
    mutating func nextGaussian() -> Float {
        (nextUniform() + nextUniform() + nextUniform() + nextUniform()) * 0.866_025_4
    }
}
