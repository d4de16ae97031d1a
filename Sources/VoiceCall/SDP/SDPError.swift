/// Why an SDP was refused: what is wrong and, when one line is to blame, its number (from 1).
public struct SDPError: Error, Hashable, Sendable, CustomStringConvertible {
    public var line: Int?
    public var reason: String

    public init(_ reason: String, line: Int? = nil) {
        self.reason = reason
        self.line = line
    }

    public var description: String { line.map { "line \($0): \(reason)" } ?? reason }
}
