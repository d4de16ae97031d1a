import CAllocCounter
import Glibc
import Testing

/// Whether lock operations are counted, asked by every test that asserts on `lock_counter_stop()`'s count.
///
/// Locks are not counted under the sanitizers (they interpose the lock calls themselves) nor off x86-64
/// (`lock_counter_is_active`). A test that asks where they are not is named, one per line, in the file that the
/// environment's `VOICEIO_UNCOUNTED_LOCK_TESTS` names: `scripts/test` runs the unit tests under AddressSanitizer with it
/// set, then runs the tests named there again uninstrumented, so every lock assertion runs somewhere without a list kept
/// by hand (one kept so had left three tests' lock assertions unrun for a session).
enum LockCounting {
    /// Whether this process counts locks; where it does not, names the calling test as above. Call it from the test's
    /// own task (it reads `Test.current`), not from a thread the test started.
    static var isActive: Bool {
        if lock_counter_is_active() != 0 { return true }
        if let test = Test.current { record(test) }
        return false
    }

    /// Appends the test's module, suite and function name (`Module.Suite/function`, a pattern for `swift test
    /// --filter`) to the file named by `VOICEIO_UNCOUNTED_LOCK_TESTS`, if it is set. One `write` of one line to a file
    /// opened for appending: the lines of tests that run at once do not interleave.
    private static func record(_ test: Test) {
        guard let path = getenv("VOICEIO_UNCOUNTED_LOCK_TESTS") else { return }
        let id = String(describing: test.id)  // Module.Suite/function(labels:)/File.swift:line:column
        let line = "\(id.split(separator: "(").first.map(String.init) ?? id)\n"
        let descriptor = open(path, O_WRONLY | O_APPEND | O_CREAT, 0o644)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        _ = line.withCString { write(descriptor, $0, strlen($0)) }
    }
}
