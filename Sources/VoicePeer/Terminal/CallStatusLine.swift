import Foundation
import VoiceCall
import VoiceIO

/// The call's live figures as one line: levels, ERLE, loss, jitter, jitter-buffer delay, RTT and bypass.
enum CallStatusLine {
    static func text(seconds: Double, unit: VoiceProcessingStatistics, call: CallStatistics, bypass: Bool) -> String {
        let rtt = call.roundTripMilliseconds.map { String(format: "%.0f ms", $0) } ?? "—"
        return String(format: "%6.1f s  mic %6.1f  out %6.1f  far %6.1f dBFS  ERLE %5.1f dB  loss %lld  jitter %4.1f ms  JB %4.0f ms  RTT %@  %@",
                      seconds, unit.microphone.rmsDBFS, unit.processed.rmsDBFS, unit.farEnd.rmsDBFS, unit.erleDB,
                      call.packetsLost, call.jitterMilliseconds, call.jitterBuffer.delayMilliseconds, rtt,
                      bypass ? "BYPASS" : "processing")
    }

    /// Rewrites the line in place on a terminal (standard error).
    static func show(_ text: String) {
        FileHandle.standardError.write(Data("\r\(text)\u{1B}[K".utf8))
    }
}
