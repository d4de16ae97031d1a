import Glibc

/// Whether the microphone hears the far end at all: the linear filter's echo return loss enhancement over about
/// the last three seconds of far-end sound without a near talker heard, the microphone taken as the filter saw it
/// (after the DC notch, which alone takes 3-6 dB off a pink background). At 3 dB or less (`isTakingLittleOff`) the
/// filter found no echo: a headset's microphone, which hears none. Three seconds, not one: a hot microphone's filter
/// may take that long to converge (our hot-microphone scene g06). The average outlasts the filter's restarts (the room
/// does not change when the filter does), and a near talker's blocks are left out (a talker dilutes the ERLE of a good
/// filter). The owner starts it over (`restart`) when echo turns up after all: `EchoCanceller.isShadowCancelling`, the
/// filter taking 3 dB off over 100 ms of far end (`ExplainedShare`), or the average itself ending its verdict. Counted
/// in seconds (`BlockRate`). Real-time safe.
struct EchoPresence {
    private var errorPower: Float = 0
    private var microphonePower: Float = 0
    /// Blocks the average holds, at most `blocks`.
    private var count = 0
    /// Far-end blocks averaged: three seconds of them.
    private let blocks: Int

    /// Seconds of far-end blocks averaged.
    private static var seconds: Double { 3 }
    /// ERLE at or below which the filter takes next to nothing off.
    private static var littleERLEDecibels: Float { 3 }

    init(rate: BlockRate) {
        blocks = rate.blocks(seconds: Self.seconds)
    }

    /// Forgets the average (echo turned up after all). Real-time safe.
    mutating func restart() {
        errorPower = 0
        microphonePower = 0
        count = 0
    }

    /// One far-end block without a near talker heard: the filter's error power and the power of the microphone it
    /// saw (after the notch), summed over the block.
    mutating func add(errorPower blockError: Float, microphonePower blockMicrophone: Float) {
        count = min(count + 1, blocks)
        errorPower += (blockError - errorPower) / Float(count)
        microphonePower += (blockMicrophone - microphonePower) / Float(count)
    }

    /// Whether the filter took at most 3 dB off over the blocks averaged (false until three seconds of them).
    var isTakingLittleOff: Bool {
        count >= blocks && errorPower * pow(10, Self.littleERLEDecibels / 10) >= microphonePower
    }
}
