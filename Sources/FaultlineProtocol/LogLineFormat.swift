// The file log's line format, read side: `faultline console` and the tests parse what the SDK's
// file log writes (the writer, which must not allocate per line, is in the SDK: LogLineFormat+Write).
//
//
//   2026-12-01T10:20:30.123Z<TAB>INFO<TAB>4242:4250<TAB>App/Upload.swift:88<TAB>send(_:)<TAB>message<TAB>{"k":"v"}
//
// Seven TAB-separated fields, one record per line: UTC timestamp with milliseconds, level in
// capitals (TRACE DEBUG INFO NOTICE WARNING ERROR CRITICAL), pid:tid, file:line, function,
// message, attributes as a JSON object (empty field when there are none; trace_id/span_id appear
// there when the event has them). In the message, `\` `TAB` `LF` `CR` are written as `\\` `\t`
// `\n` `\r` and other control bytes as `\u00XX`, so a message never breaks the line. A line
import FoundationEssentials

public enum LogLineFormat {
    /// One parsed line.
    public struct Line: Sendable, Equatable {
        public var timestamp: String
        public var level: LogLevel
        public var pid: Int
        public var threadID: Int
        public var file: String
        public var line: Int
        public var function: String
        public var message: String
        /// The attributes' JSON text ("" when none).
        public var attributes: String
    }

    /// Parses one line (without its newline). Nil for a line that is not in this format (a
    /// stderr capture, or a line cut by a crash).
    public static func parse(_ text: Substring) -> Line? {
        let f = text.split(separator: "\t", maxSplits: 6, omittingEmptySubsequences: false)
        guard f.count == 7, let level = LogLevel(name: String(f[1])) else { return nil }
        let ids = f[2].split(separator: ":")
        guard ids.count == 2, let colon = f[3].lastIndex(of: ":") else { return nil }
        return Line(
            timestamp: String(f[0]), level: level, pid: Int(ids[0]) ?? 0, threadID: Int(ids[1]) ?? 0,
            file: String(f[3][..<colon]), line: Int(f[3][f[3].index(after: colon)...]) ?? 0,
            function: String(f[4]), message: unescape(f[5]), attributes: String(f[6]))
    }

    package static func unescape(_ s: Substring) -> String {
        guard s.contains("\\") else { return String(s) }
        var out = ""
        var it = s.makeIterator()
        while let c = it.next() {
            guard c == "\\", let e = it.next() else { out.append(c); continue }
            switch e {
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "u":
                var hex = ""
                for _ in 0..<4 { if let h = it.next() { hex.append(h) } }
                if let v = UInt32(hex, radix: 16), let u = Unicode.Scalar(v) { out.unicodeScalars.append(u) }
            default: out.append(e)
            }
        }
        return out
    }
}
