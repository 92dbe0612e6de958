// Why a process crashed, as its runtime said it: the report's `message` field and what an event
// makes of it (exception type and value, and where the runtime said it happened).
import FoundationEssentials

public struct CrashMessage: Sendable, Equatable {
    /// Which runtime left it: "swift" (fatal-error buffer), "c++" (terminate handler), "glibc"
    /// (assert and glibc's own aborts).
    public var source: String
    /// The exception's type when the runtime names one (C++), else empty.
    public var type: String
    /// The runtime's text, as it wrote it.
    public var text: String

    public init(source: String, type: String, text: String) {
        self.source = source; self.type = type; self.text = text
    }

    /// The exception an event shows for this message. The type never embeds a varying value
    /// (it enters grouping); the value may (it is only shown).
    public struct Interpretation: Sendable, Equatable {
        public var type: String
        public var value: String
        /// Where the runtime said the failure was (Swift's `file:line:`, assert's file, line, function).
        public var file: String?
        public var line: Int?
        public var function: String?
    }

    public var interpretation: Interpretation {
        switch source {
        case "c++":
            return Interpretation(type: type.isEmpty ? "C++ exception" : type, value: text.trimmingWhitespaceAndNewlines())
        case "swift":
            return Self.swiftFatalError(text)
        case "glibc":
            return Self.glibcAbort(text)
        default:
            return Interpretation(type: type.isEmpty ? "crash message" : type, value: text.trimmingWhitespaceAndNewlines())
        }
    }

    /// `<file>:<line>: Fatal error: <message>` (also "Precondition failed", "Assertion failed";
    /// the file part is absent when the caller passed none). The runtime appends each report to
    /// the buffer, so the last such line is the one that ended the process.
    static func swiftFatalError(_ text: String) -> Interpretation {
        let kinds = ["Fatal error", "Precondition failed", "Assertion failed"]
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        for line in lines.reversed() {
            for kind in kinds {
                guard let range = line.firstRange(of: kind) else { continue }
                var message = String(line[range.upperBound...])
                if message.hasPrefix(": ") { message.removeFirst(2) }
                var file: String?, number: Int?
                let head = line[..<range.lowerBound].trimmingBlanks()
                if head.hasSuffix(":") {
                    let location = head.dropLast()
                    if let colon = location.lastIndex(of: ":"), let n = Int(location[location.index(after: colon)...]) {
                        file = String(location[..<colon]); number = n
                    }
                }
                return Interpretation(type: "Swift " + kind.lowercased(), value: message.isEmpty ? kind : message, file: file, line: number)
            }
        }
        return Interpretation(type: "Swift fatal error", value: lines.last ?? "")
    }

    /// glibc's assert: `<program>: <file>:<line>: <function>: Assertion `<expr>' failed.`; any
    /// other glibc abort message ("free(): double free detected in tcache 2") is shown as it is.
    static func glibcAbort(_ text: String) -> Interpretation {
        let line = text.trimmingWhitespaceAndNewlines()
        if let assertion = line.firstRange(of: ": Assertion `"), line.hasSuffix("' failed.") {
            let expression = String(line[assertion.upperBound..<line.index(line.endIndex, offsetBy: -"' failed.".count)])
            // Before it: "<program>: <file>:<line>: <function>" (the program part may be absent).
            let before = line[..<assertion.lowerBound]
            var parts = before.split(separator: ": ", omittingEmptySubsequences: false).map(String.init)
            let function = parts.count >= 2 ? parts.removeLast() : nil
            var file: String?, number: Int?
            if let location = parts.last, let colon = location.lastIndex(of: ":"), let n = Int(location[location.index(after: colon)...]) {
                file = String(location[..<colon]); number = n
            }
            return Interpretation(type: "Assertion failed", value: expression, file: file, line: number, function: function)
        }
        return Interpretation(type: "glibc abort", value: line)
    }
}
