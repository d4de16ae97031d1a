import Glibc
import VoiceFuzzing

// The libFuzzer entry point for the target named by VOICE_FUZZ_TARGET (one binary serves every target).
// scripts/fuzz compiles this file with `-sanitize=fuzzer,address` and links it against an instrumented build.

private let target: FuzzTarget = {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
    guard let name = getenv("VOICE_FUZZ_TARGET").map({ String(cString: $0) }), let target = FuzzTarget(rawValue: name) else {
        fputs("fuzz: set VOICE_FUZZ_TARGET to one of: \(names)\n", stderr)
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ byteCount: Int) -> Int32 {
    target.run(UnsafeRawBufferPointer(start: data, count: byteCount))
    return 0
}
