#if canImport(Glibc)
import Glibc
#endif

/// The monotonic clock (CLOCK_MONOTONIC, shared by every process on the machine), in nanoseconds and seconds.
enum Clock {
    static func nanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    static func seconds() -> Double { Double(nanoseconds()) / 1e9 }
}
