// The file log's line format: written without a formatter object or a heap allocation per line,
// and parsed back by `faultline console` and the tests.
//
//   2026-12-01T10:20:30.123Z<TAB>INFO<TAB>4242:4250<TAB>App/Upload.swift:88<TAB>send(_:)<TAB>message<TAB>{"k":"v"}
//
// Seven TAB-separated fields, one record per line: UTC timestamp with milliseconds, level in
// capitals (TRACE DEBUG INFO NOTICE WARNING ERROR CRITICAL), pid:tid, file:line, function,
// message, attributes as a JSON object (empty field when there are none; trace_id/span_id appear
// there when the event has them). In the message, `\` `TAB` `LF` `CR` are written as `\\` `\t`
// `\n` `\r` and other control bytes as `\u00XX`, so a message never breaks the line. A line
// longer than the cap allows is cut and ends with `…[cut N bytes]` before the newline.
import CFaultlineCrash
import FaultlineProtocol
import Foundation

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
        return Line(timestamp: String(f[0]), level: level, pid: Int(ids[0]) ?? 0, threadID: Int(ids[1]) ?? 0,
                    file: String(f[3][..<colon]), line: Int(f[3][f[3].index(after: colon)...]) ?? 0,
                    function: String(f[4]), message: unescape(f[5]), attributes: String(f[6]))
    }

    static func unescape(_ s: Substring) -> String {
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

    static let levelNames: [StaticString] = ["TRACE", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL"]

    /// Formats `event` into a stack buffer (heap only for lines over 4 KiB), cut to `maxBytes`
    /// (at least 256), and calls `body` with the bytes, newline included.
    static func withLine<R>(_ event: LogEvent, pid: Int32, maxBytes: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        let limit = max(256, maxBytes)
        let fast = min(4096, limit)
        let r: R? = withUnsafeTemporaryAllocation(byteCount: fast, alignment: 1) { buf in
            var w = LineWriter(buf)
            write(event, pid: pid, into: &w)
            guard !w.overflowed else { return nil }
            return body(UnsafeRawBufferPointer(rebasing: buf[..<w.count]))
        }
        if let r { return r }
        // Long line: measure the full size, write into a heap buffer, cut.
        let big = UnsafeMutableRawBufferPointer.allocate(byteCount: limit, alignment: 1)
        defer { big.deallocate() }
        var w = LineWriter(big)
        write(event, pid: pid, into: &w)
        if w.overflowed { w.cut() }
        return body(UnsafeRawBufferPointer(rebasing: big[..<w.count]))
    }

    static func write(_ e: LogEvent, pid: Int32, into w: inout LineWriter) {
        w.timestamp(e.timestamp)
        w.byte(9); w.static(levelNames[e.level.rawValue])
        w.byte(9); w.int(Int(pid)); w.byte(0x3A); w.int(e.threadID)
        w.byte(9); w.escaped(e.file); w.byte(0x3A); w.int(Int(e.line))
        w.byte(9); w.escaped(e.function)
        w.byte(9); w.escaped(e.message)
        w.byte(9)
        if !e.attributes.isEmpty || e.traceID != nil {
            w.byte(0x7B)
            var first = true
            func key(_ k: String) { if !first { w.byte(0x2C) }; first = false; w.json(k); w.byte(0x3A) }
            if let t = e.traceID { key("trace_id"); w.json(t) }
            if let s = e.spanID { key("span_id"); w.json(s) }
            for (k, v) in e.attributes.sorted(by: { $0.key < $1.key }) {
                key(k)
                switch v {
                case .string(let s): w.json(s)
                case .int(let i): w.int(i)
                case .double(let d): if d.isFinite { w.ascii(d.description) } else { w.static("null") }
                case .bool(let b): w.static(b ? "true" : "false")
                }
            }
            w.byte(0x7D)
        }
        w.byte(10)
    }
}

/// Writes into caller memory and remembers whether the line did not fit.
struct LineWriter {
    let buf: UnsafeMutableRawBufferPointer
    var count = 0
    var overflowed = false
    var wanted = 0  // bytes the full line would need
    init(_ buf: UnsafeMutableRawBufferPointer) { self.buf = buf }

    @inline(__always) mutating func byte(_ b: UInt8) {
        wanted += 1
        if count < buf.count { buf[count] = b; count += 1 } else { overflowed = true }
    }
    mutating func bytes(_ p: UnsafeRawBufferPointer) {
        let n = min(p.count, buf.count - count)
        if n > 0 { UnsafeMutableRawBufferPointer(rebasing: buf[count..<count + n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: p[..<n])) }
        count += n
        wanted += p.count
        if n < p.count { overflowed = true }
    }
    mutating func `static`(_ s: StaticString) { s.withUTF8Buffer { bytes(UnsafeRawBufferPointer($0)) } }
    mutating func ascii(_ s: String) { for b in s.utf8 { byte(b) } }
    mutating func int(_ v: Int) {
        if v < 0 { byte(0x2D) }
        var m = v.magnitude
        var d: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes of digit space
        withUnsafeMutableBytes(of: &d) { digits in
            var n = 0
            repeat { digits[n] = UInt8(48 + m % 10); m /= 10; n += 1 } while m > 0
            while n > 0 { n -= 1; byte(digits[n]) }
        }
    }
    mutating func pad(_ v: Int, _ width: Int) {
        var div = 1
        for _ in 1..<width { div *= 10 }
        var x = v
        while div > 0 { byte(UInt8(48 + (x / div) % 10)); x %= div; div /= 10 }
    }
    /// `2026-12-01T10:20:30.123Z` from gmtime_r: no formatter, no allocation.
    mutating func timestamp(_ t: LogTimestamp) {
        var secs = time_t(t.seconds)
        var tm = tm()
        gmtime_r(&secs, &tm)
        pad(Int(tm.tm_year) + 1900, 4); byte(0x2D); pad(Int(tm.tm_mon) + 1, 2); byte(0x2D); pad(Int(tm.tm_mday), 2)
        byte(0x54); pad(Int(tm.tm_hour), 2); byte(0x3A); pad(Int(tm.tm_min), 2); byte(0x3A); pad(Int(tm.tm_sec), 2)
        byte(0x2E); pad(Int(t.nanoseconds) / 1_000_000, 3); byte(0x5A)
    }
    @inline(__always) mutating func escapedByte(_ b: UInt8) {
        switch b {
        case 0x5C: byte(0x5C); byte(0x5C)
        case 0x09: byte(0x5C); byte(0x74)
        case 0x0A: byte(0x5C); byte(0x6E)
        case 0x0D: byte(0x5C); byte(0x72)
        case 0..<0x20, 0x7F:
            let hex: StaticString = "0123456789abcdef"
            byte(0x5C); byte(0x75); byte(0x30); byte(0x30)
            hex.withUTF8Buffer { h in byte(h[Int(b >> 4)]); byte(h[Int(b & 15)]) }
        default: byte(b)
        }
    }
    mutating func escaped(_ s: StaticString) { s.withUTF8Buffer { for b in $0 { escapedByte(b) } } }
    mutating func escaped(_ s: String) {
        var s = s
        s.withUTF8 { u in
            // Most messages need no escaping: copy them in one go.
            if !u.contains(where: { $0 < 0x20 || $0 == 0x5C || $0 == 0x7F }) { bytes(UnsafeRawBufferPointer(u)) } else { for b in u { escapedByte(b) } }
        }
    }
    mutating func json(_ s: String) {
        var out: [UInt8] = []
        JSONWriter.writeString(s, into: &out)
        out.withUnsafeBytes { bytes($0) }
    }
    /// Ends an overflowed line with a marker and a newline inside the buffer.
    mutating func cut() {
        var marker = Array("…[cut \(wanted - buf.count + 32) bytes]\t\n".utf8)  // ends the message, empty attributes
        if marker.count > buf.count { marker = [10] }
        var end = buf.count - marker.count
        // Do not leave half a UTF-8 character before the marker.
        while end > 0 && (buf[end] & 0xC0) == 0x80 { end -= 1 }
        count = end
        overflowed = false
        for b in marker { buf[count] = b; count += 1 }
    }
}
