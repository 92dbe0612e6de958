// The file log's line format, write side (the format and its parser are in FaultlineProtocol's
// LogLineFormat): formatted without a formatter object or a heap allocation per line.
import CFaultlineCrash
import FaultlineProtocol
import Foundation

extension LogLineFormat {
    static let levelNames: [StaticString] = LogLevel.allCases.map(\.fileLogName)

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
    /// `2026-12-01T10:20:30.123Z`, milliseconds cut: no formatter, no allocation.
    mutating func timestamp(_ t: LogTimestamp) {
        SentryTimestamp.write(wholeSeconds: Int64(t.seconds), milliseconds: Int(t.nanoseconds) / 1_000_000) { byte($0) }
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
            hex.withUTF8Buffer { h in
                byte(h[Int(b >> 4)]); byte(h[Int(b & 15)])
            }
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
