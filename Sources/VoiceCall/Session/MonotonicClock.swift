#if canImport(Glibc)
import Glibc
#endif

/// CLOCK_MONOTONIC in the units the call needs. A vDSO call on Linux (no kernel entry, no lock, no allocation), so
/// the audio thread may read it too.
enum MonotonicClock {
    static func nanoseconds() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// Now in ticks of the 48 kHz RTP clock, the unit arrival times are stamped in.
    static func rtpTicks() -> Int64 { rtpTicks(at: nanoseconds()) }

    /// `nanoseconds` of this clock in ticks of the 48 kHz RTP clock.
    static func rtpTicks(at nanoseconds: Int64) -> Int64 { nanoseconds * Int64(OpusFormat.rtpClockRate) / 1_000_000_000 }
}
