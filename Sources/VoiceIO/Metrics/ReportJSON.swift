#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How the library's reports (`OfflineProcessingReport`, the unit's statistics, a call's report) are written
/// and read as JSON: the properties' own names as keys (those of `voicepeer process --stats` excepted, kept as
/// they always were), sorted and indented, so that scripts read them with jq and people can diff them.
/// Not real-time safe.
public enum ReportJSON {
    public static func encode<Report: Encodable>(_ report: Report) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        // A figure that is not finite (none should be) must not cost the whole report.
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf",
                                                                      nan: "nan")
        return String(decoding: try encoder.encode(report), as: UTF8.self) + "\n"
    }

    public static func decode<Report: Decodable>(_ type: Report.Type, from text: String) throws -> Report {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf",
                                                                        negativeInfinity: "-inf", nan: "nan")
        return try decoder.decode(type, from: Data(text.utf8))
    }
}
