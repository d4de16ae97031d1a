#if canImport(Glibc)
import Glibc
#endif
import VoiceIO

/// Mean levels (in power) over the statistics snapshots taken while the far end was audible (the unit's
/// statistics carry the ERLE over the same stretch: `VoiceProcessingStatistics.erle`).
public struct FarTalkLevels: Sendable {
    /// A snapshot counts when the far end is louder than this, in dBFS RMS.
    public static let farActiveDBFS: Float = -50
    public private(set) var snapshotCount = 0
    private var microphonePower = 0.0
    private var processedPower = 0.0
    private var farPower = 0.0

    public init() {}

    public mutating func observe(_ stats: VoiceProcessingStatistics) {
        guard stats.farEnd.rmsDBFS > Self.farActiveDBFS else { return }
        snapshotCount += 1
        microphonePower += Self.power(stats.microphone.rmsDBFS)
        processedPower += Self.power(stats.processed.rmsDBFS)
        farPower += Self.power(stats.farEnd.rmsDBFS)
    }

    public var microphoneDBFS: Double { dB(microphonePower) }
    public var processedDBFS: Double { dB(processedPower) }
    public var farDBFS: Double { dB(farPower) }

    private static func power(_ dBFS: Float) -> Double { pow(10, Double(dBFS) / 10) }
    private func dB(_ sum: Double) -> Double { 10 * log10(max(sum / Double(max(snapshotCount, 1)), 1e-20)) }
}
