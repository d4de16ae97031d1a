#if canImport(Glibc)
import Glibc
#endif

/// A 64-bit NTP timestamp (seconds since 1900 and a binary fraction), as RTCP sender reports carry it.
/// `middle32` (16.16 fixed point) is what LSR and DLSR are measured in. Real-time safe.
public struct NTPTimestamp: Sendable, Hashable {
    /// Seconds from 1900-01-01 to 1970-01-01.
    static let unixEpochOffsetSeconds: UInt64 = 2_208_988_800

    public var seconds: UInt32
    public var fraction: UInt32

    public init(seconds: UInt32, fraction: UInt32) {
        self.seconds = seconds
        self.fraction = fraction
    }

    /// From a count of seconds since 1900 (fraction kept to about 0.2 ns).
    public init(secondsSince1900: Double) {
        let whole = secondsSince1900.rounded(.down)
        seconds = UInt32(truncatingIfNeeded: UInt64(whole))
        fraction = UInt32(min((secondsSince1900 - whole) * 4_294_967_296, 4_294_967_295))
    }

    /// The wall clock now (CLOCK_REALTIME).
    public static func now() -> NTPTimestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        let fraction = (UInt64(time.tv_nsec) << 32) / 1_000_000_000
        return NTPTimestamp(seconds: UInt32(truncatingIfNeeded: UInt64(time.tv_sec) + unixEpochOffsetSeconds),
                            fraction: UInt32(truncatingIfNeeded: fraction))
    }

    /// The middle 32 bits: low 16 bits of the seconds, high 16 bits of the fraction (units of 1/65536 s).
    public var middle32: UInt32 { (seconds << 16) | (fraction >> 16) }

    /// The whole 64 bits, seconds high.
    public var rawValue: UInt64 { UInt64(seconds) << 32 | UInt64(fraction) }
}
