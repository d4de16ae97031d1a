import Foundation
import Testing
import VoiceFuzzing

/// Replays every committed seed (`Fuzz/corpus/<target>/`) and every crash input kept from a fuzzing run
/// (`Fuzz/regressions/<target>/`) through the fuzz targets' own entry points, so a fixed crash stays fixed.
/// Each target replays in a child process (an exit test): a crash fails that target's test with the input and
/// the message, rather than ending the whole test run.
@Suite struct FuzzRegressionTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    /// The files in `Fuzz/<folder>/<target>/`, sorted; none when the folder does not exist.
    static func inputs(of target: FuzzTarget, in folder: String) -> [URL] {
        let directory = fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzTarget.allCases)
    func everyTargetHasSeeds(_ target: FuzzTarget) {
        #expect(Self.inputs(of: target, in: "corpus").count >= 3, "Fuzz/corpus/\(target.rawValue) needs seeds")
    }

    /// Runs every input of `target` in turn, naming each on standard error first.
    static func replay(_ target: FuzzTarget) throws {
        for file in inputs(of: target, in: "corpus") + inputs(of: target, in: "regressions") {
            FileHandle.standardError.write(Data("replaying \(file.path)\n".utf8))
            let bytes = try Data(contentsOf: file)
            bytes.withUnsafeBytes { target.run($0) }
        }
    }

    @Test(arguments: FuzzTarget.allCases)
    func corpusAndCrashInputsReplayCleanly(_ target: FuzzTarget) async {
        let name = target.rawValue
        let passed = await #expect(processExitsWith: .success) { [name = name as String] in
            try Self.replay(FuzzTarget(rawValue: name)!)
        } != nil
        guard !passed else { return }
        // Run it again only to show which input crashed and how (a failing exit test keeps no output).
        let crash = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [name = name as String] in
            try Self.replay(FuzzTarget(rawValue: name)!)
        }
        let log = crash.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
        Issue.record("\(name) crashed:\n\(log.split(separator: "\n").suffix(6).joined(separator: "\n"))")
    }
}
