#if canImport(Glibc)
import Glibc
#endif
import VoiceCall
import VoiceIO

/// The call's live figures as one line: levels, ERLE, packets received and lost, jitter, jitter-buffer delay
/// (with the milliseconds latency control removed and added), concealment (count and longest run), RTT, bypass,
/// mute, a clipping microphone and a canceller that found no echo.
enum CallStatusLine {
    static func text(seconds: Double, unit: VoiceProcessingStatistics, call: CallStatistics, bypass: Bool,
                     muted: Bool = false) -> String {
        let rtt = call.roundTripMilliseconds.map { String(cFormat: "%.0f ms", $0) } ?? "—"
        return String(cFormat: "%6.1f s  mic %6.1f  out %6.1f  far %6.1f dBFS  ERLE %5.1f dB  rx %d  loss %lld  jitter %4.1f ms  JB %4.0f ms %@  concealed %d (longest %.0f ms)  RTT %@  %@%@%@%@",
                      seconds, unit.microphone.rmsDBFS, unit.processed.rmsDBFS, unit.farEnd.rmsDBFS, unit.erleDB,
                      call.packetsReceived, call.packetsLost, call.jitterMilliseconds, call.jitterBuffer.delayMilliseconds,
                      latencyControl(call.jitterBuffer), call.jitterBuffer.concealed,
                      call.jitterBuffer.longestConcealmentMilliseconds, rtt, bypass ? "BYPASS" : "processing",
                      muted ? "  MUTED" : "", unit.isMicrophoneClipping ? "  MIC CLIPPING" : "",
                      unit.isNoEchoFound ? "  no echo found" : "")
    }

    /// Milliseconds the jitter buffer removed and added to hold its target, as "−R/+A".
    static func latencyControl(_ buffer: JitterBufferStatistics) -> String {
        String(cFormat: "−%.0f/+%.0f", buffer.removedMilliseconds, buffer.expandedMilliseconds)
    }

    /// The summary's line on latency control: what was removed (and how) and added, in milliseconds.
    static func latencyControlSummary(_ buffer: JitterBufferStatistics) -> String {
        String(cFormat: "  latency control: removed %.0f ms (skipped %.0f after pauses, %.0f in bursts, silence %.0f, accelerated %.0f), added %.0f ms (expanded), puller pauses %d",
               buffer.removedMilliseconds, buffer.skippedMilliseconds, buffer.burstSkippedMilliseconds,
               buffer.silenceDroppedMilliseconds,
               buffer.acceleratedMilliseconds, buffer.expandedMilliseconds, buffer.pullGaps)
    }

    /// Rewrites the line in place on a terminal (standard error).
    static func show(_ text: String) {
        StandardError.write("\r\(text)\u{1B}[K")
    }
}
