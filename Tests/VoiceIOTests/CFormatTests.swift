import Testing
import VoiceIO

/// `String(cFormat:)`, the Foundation-free stand-in for `String(format:)` in the command line's figures.
@Suite struct CFormatTests {
    @Test func numbersFollowCsPrintf() {
        #expect(String(cFormat: "%d packets, %lld frames", 42, Int64(-7)) == "42 packets, -7 frames")
        #expect(String(cFormat: "%.1f dB %.3f s %6.1f|%+.1f", -3.04, 0.0125, 2.25, 1.25) == "-3.0 dB 0.013 s    2.2|+1.2")
        #expect(String(cFormat: "%.2f %.0f", Float(0.5), 3) == "0.50 3")
        #expect(String(cFormat: "%d %u", UInt8(200), Int32(-1)) == "200 -1")
    }

    @Test func valuesPercentAndMistakes() {
        #expect(String(cFormat: "%@ (gain %+.1f dB) 100%%", "ring.wav", -6.0) == "ring.wav (gain -6.0 dB) 100%")
        #expect(String(cFormat: "[%5@|%-5@]", "ab", "cd") == "[   ab|cd   ]")
        // A missing argument or one of the wrong kind stays visible in the text.
        #expect(String(cFormat: "%d and %d", 1) == "1 and %d")
        #expect(String(cFormat: "%.1f", "text") == "%.1f")
        #expect(String(cFormat: "ends with %") == "ends with %")
    }
}
