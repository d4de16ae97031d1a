import ArgumentParser

/// The range a numeric flag accepts; a value outside it, NaN or infinite fails validation with one line naming
/// the flag, before any arithmetic (conversions to `Int` would trap on such values).
struct FlagRange {
    let flag: String
    let range: ClosedRange<Double>
    /// Whether the lower bound itself is refused (e.g. a duration must be more than 0).
    var isLowerBoundExcluded = false

    /// Throws `ValidationError` unless `value` is nil or within the range.
    func check(_ value: Double?) throws {
        guard let value else { return }
        let above = isLowerBoundExcluded ? value > range.lowerBound : value >= range.lowerBound
        guard value.isFinite, above, value <= range.upperBound else {
            let low = isLowerBoundExcluded ? "more than \(Self.text(range.lowerBound))" : "at least \(Self.text(range.lowerBound))"
            throw ValidationError("\(flag) must be \(low) and at most \(Self.text(range.upperBound)) (got \(Self.text(value)))")
        }
    }

    func check(_ value: Float?) throws { try check(value.map(Double.init)) }

    func check(_ value: Int?) throws { try check(value.map(Double.init)) }

    private static func text(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : "\(value)"
    }
}
