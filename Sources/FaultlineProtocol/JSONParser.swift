// The one JSON reader (RFC 8259, strict) into JSONValue, used by the SDK, the CLI and the
// server's ingest hot path. It reads the bytes once, allocation-light (JSONDecoder tried each type
// in turn and cost about 1 ms per 14 KB event). Nesting is bounded so a hostile document cannot
// exhaust the stack.
import FoundationEssentials

public enum JSONParser {
    /// Why a document is not valid JSON, and where.
    public struct Failure: Error, CustomStringConvertible {
        public let offset: Int
        public let reason: String
        public var description: String { "invalid JSON at byte \(offset): \(reason)" }
    }

    public static let maxDepth = 128

    /// JSON's whitespace (RFC 8259): space, tab, line feed, carriage return.
    @inline(__always) public static func isWhitespace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }

    /// The first byte of `data` that is not JSON whitespace (what tells a JSON document from other input).
    public static func firstSignificantByte(_ data: Data) -> UInt8? { data.first { !isWhitespace($0) } }

    public static func parse(_ data: Data) throws(Failure) -> JSONValue {
        try document(data, selecting: nil)
    }

    struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var pos = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func fail(_ reason: String) -> Failure { Failure(offset: pos, reason: reason) }

        @inline(__always) mutating func skipSpace() {
            while pos < bytes.count {
                let c = bytes[pos]
                if JSONParser.isWhitespace(c) { pos += 1 } else { break }
            }
        }

        mutating func value(depth: Int) throws(Failure) -> JSONValue {
            guard depth < JSONParser.maxDepth else { throw fail("nested deeper than \(JSONParser.maxDepth)") }
            guard pos < bytes.count else { throw fail("unexpected end") }
            switch bytes[pos] {
            case UInt8(ascii: "{"): return try object(depth: depth)
            case UInt8(ascii: "["): return try array(depth: depth)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            default: return try number()
            }
        }

        mutating func literal(_ word: StaticString) throws(Failure) {
            let n = word.utf8CodeUnitCount
            guard pos + n <= bytes.count else { throw fail("unexpected end") }
            let w = word.utf8Start
            for i in 0..<n where bytes[pos + i] != w[i] { throw fail("unexpected character") }
            pos += n
        }

        /// With a selection, only the members it names are built (JSONSelection); the others are
        /// validated and skipped.
        mutating func object(depth: Int, selecting selection: JSONSelection? = nil) throws(Failure) -> JSONValue {
            pos += 1
            skipSpace()
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(JSONObject()) }
            // Room for a typical object's members at once: growing 1, 2, 4, 8 showed in ingest profiles.
            var out = JSONObject(minimumCapacity: 8)
            // Which byte lengths the ASCII keys kept so far have (bit `count % 64`): two ASCII keys
            // of different lengths differ, so a key whose length is new needs no search for an
            // earlier copy of itself. Any other key (escaped, non-ASCII: canonically equivalent to
            // a key of another length) is searched, and so is every key after it.
            var asciiLengthsKept: UInt64 = 0
            var onlyASCIIKept = true
            while true {
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                let (key, asciiCount) = try self.key()
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                pos += 1
                skipSpace()
                let v: JSONValue?
                switch selection?.member(key, asciiCount: asciiCount) ?? .whole {
                case .whole: v = try value(depth: depth + 1)
                case .selected(let inner): v = try selected(inner, depth: depth + 1)
                case .presenceOnly:
                    try skipValue(depth: depth + 1)
                    v = .null
                case .skipped:
                    try skipValue(depth: depth + 1)
                    v = nil
                }
                // A repeated key keeps its place and takes the later value, as a Dictionary would.
                if let v {
                    var mayRepeat = true
                    if let n = asciiCount, onlyASCIIKept {
                        let bit: UInt64 = 1 << UInt64(n & 63)
                        mayRepeat = asciiLengthsKept & bit != 0
                        asciiLengthsKept |= bit
                    } else {
                        onlyASCIIKept = false
                    }
                    if mayRepeat, let i = out.position(of: key) { out.replaceValue(at: i, with: v) } else { out.appendNew(key, v) }
                }
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated object") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "}") { pos += 1; return .object(out) }
                throw fail("expected ',' or '}'")
            }
        }

        /// A value under a selection: an object's members as it says, an array's elements each
        /// under it, a scalar as it is.
        mutating func selected(_ selection: JSONSelection, depth: Int) throws(Failure) -> JSONValue {
            guard depth < JSONParser.maxDepth else { throw fail("nested deeper than \(JSONParser.maxDepth)") }
            guard pos < bytes.count else { throw fail("unexpected end") }
            switch bytes[pos] {
            case UInt8(ascii: "{"): return try object(depth: depth, selecting: selection)
            case UInt8(ascii: "["): return try array(depth: depth, selecting: selection)
            default: return try value(depth: depth)
            }
        }

        mutating func array(depth: Int, selecting selection: JSONSelection? = nil) throws(Failure) -> JSONValue {
            pos += 1
            var out: [JSONValue] = []
            skipSpace()
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(out) }
            while true {
                skipSpace()
                if let selection { out.append(try selected(selection, depth: depth + 1)) } else { out.append(try value(depth: depth + 1)) }
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated array") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "]") { pos += 1; return .array(out) }
                throw fail("expected ',' or ']'")
            }
        }

        /// An object's key, and its length when its bytes are ASCII without escapes (nil
        /// otherwise): then the key is exactly those bytes.
        mutating func key() throws(Failure) -> (String, asciiCount: Int?) {
            let start = pos + 1
            let key = try string()
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<(pos - 1)])
            // Every escape is longer than what it stands for: as long as its text, a key has none.
            guard raw.count == key.utf8.count, !raw.contains(where: { $0 >= 0x80 }) else { return (key, nil) }
            return (key, raw.count)
        }

        mutating func string() throws(Failure) -> String {
            pos += 1
            let start = pos
            // Fast path: no escapes.
            pos = stringStop(from: pos)
            if pos < bytes.count {
                let c = bytes[pos]
                if c == UInt8(ascii: "\"") {
                    let s = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self)
                    pos += 1
                    return s
                }
                if c < 0x20 { throw fail("control character in string") }
            }
            var buf = [UInt8](UnsafeBufferPointer(rebasing: bytes[start..<pos]))
            while pos < bytes.count {
                let c = bytes[pos]
                if c == UInt8(ascii: "\"") { pos += 1; return String(decoding: buf, as: UTF8.self) }
                if c < 0x20 { throw fail("control character in string") }
                if c != UInt8(ascii: "\\") { buf.append(c); pos += 1; continue }
                pos += 1
                guard pos < bytes.count else { break }
                let e = bytes[pos]
                pos += 1
                switch e {
                case UInt8(ascii: "\""): buf.append(0x22)
                case UInt8(ascii: "\\"): buf.append(0x5C)
                case UInt8(ascii: "/"): buf.append(0x2F)
                case UInt8(ascii: "b"): buf.append(0x08)
                case UInt8(ascii: "f"): buf.append(0x0C)
                case UInt8(ascii: "n"): buf.append(0x0A)
                case UInt8(ascii: "r"): buf.append(0x0D)
                case UInt8(ascii: "t"): buf.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar < 0xDC00, pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"), bytes[pos + 1] == UInt8(ascii: "u") {
                        pos += 2
                        let low = try hex4()
                        if low >= 0xDC00 && low < 0xE000 { scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) } else { scalar = 0xFFFD }
                    }
                    let u = Unicode.Scalar(scalar) ?? "\u{FFFD}"
                    buf.append(contentsOf: Array(String(Character(u)).utf8))
                default: throw fail("bad escape")
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws(Failure) -> UInt32 {
            guard pos + 4 <= bytes.count else { throw fail("short \\u escape") }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = bytes[pos]
                let d: UInt32
                switch c {
                case 48...57: d = UInt32(c - 48)
                case 97...102: d = UInt32(c - 87)
                case 65...70: d = UInt32(c - 55)
                default: throw fail("bad \\u escape")
                }
                v = v << 4 | d
                pos += 1
            }
            return v
        }

        /// Steps over one number, checking its syntax; true when it has neither a fraction nor an
        /// exponent.
        mutating func scanNumber() throws(Failure) -> Bool {
            var isInteger = true
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "-") { pos += 1 }
            let digitsStart = pos
            while pos < bytes.count, bytes[pos] >= 48, bytes[pos] <= 57 { pos += 1 }
            guard pos > digitsStart else { throw fail("unexpected character") }
            if bytes[digitsStart] == 48 && pos - digitsStart > 1 { throw fail("leading zero") }
            if pos < bytes.count && bytes[pos] == UInt8(ascii: ".") {
                isInteger = false
                pos += 1
                let f = pos
                while pos < bytes.count, bytes[pos] >= 48, bytes[pos] <= 57 { pos += 1 }
                guard pos > f else { throw fail("digits expected after '.'") }
            }
            if pos < bytes.count && (bytes[pos] == UInt8(ascii: "e") || bytes[pos] == UInt8(ascii: "E")) {
                isInteger = false
                pos += 1
                if pos < bytes.count && (bytes[pos] == UInt8(ascii: "+") || bytes[pos] == UInt8(ascii: "-")) { pos += 1 }
                let e = pos
                while pos < bytes.count, bytes[pos] >= 48, bytes[pos] <= 57 { pos += 1 }
                guard pos > e else { throw fail("digits expected in exponent") }
            }
            return isInteger
        }

        mutating func number() throws(Failure) -> JSONValue {
            let start = pos
            let isInteger = try scanNumber()
            let span = UnsafeBufferPointer(rebasing: bytes[start..<pos])
            // Up to 18 digits cannot overflow Int64: read them here, without a String.
            if isInteger, let i = Self.smallInteger(span) { return .int(i) }
            let text = String(decoding: span, as: UTF8.self)
            if isInteger, let i = Int64(text) { return .int(i) }
            guard let d = Double(text) else { throw fail("bad number") }
            return .double(d)
        }

        /// The value of an integer's text (already checked by `scanNumber`) of at most 18 digits.
        @inline(__always) static func smallInteger(_ text: UnsafeBufferPointer<UInt8>) -> Int64? {
            let negative = text[0] == UInt8(ascii: "-")
            let first = negative ? 1 : 0
            guard text.count - first <= 18 else { return nil }
            var v: Int64 = 0
            for i in first..<text.count { v = v &* 10 &+ Int64(text[i] &- 48) }
            return negative ? -v : v
        }

        /// The first position at or after `from` holding a quote, a backslash or a control
        /// character (or the end): eight bytes are tested at a time, as strings are most of an
        /// event's bytes.
        @inline(__always) func stringStop(from: Int) -> Int {
            var p = from
            let n = bytes.count
            if let base = bytes.baseAddress {
                let ones: UInt64 = 0x0101_0101_0101_0101
                let highs: UInt64 = 0x8080_8080_8080_8080
                while p + 8 <= n {
                    // Byte order fixed, so the lowest flag is the first byte on any machine.
                    let w = UInt64(littleEndian: UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self))
                    let q = w ^ (ones &* 0x22)
                    let b = w ^ (ones &* 0x5C)
                    // A byte is flagged when it is zero after the XOR (a quote, a backslash) or
                    // below 0x20; borrows can only flag bytes above a flagged one, so the lowest
                    // flag is exact.
                    let hit = ((q &- ones) & ~q | (b &- ones) & ~b | (w &- ones &* 0x20) & ~w) & highs
                    if hit != 0 { return p + hit.trailingZeroBitCount / 8 }
                    p += 8
                }
            }
            while p < n {
                let c = bytes[p]
                if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") || c < 0x20 { return p }
                p += 1
            }
            return p
        }
    }
}

extension JSONParser {
    /// Parses a JSON object, materialising only the top-level members named in `keep`; the others
    /// are validated just as strictly but not built (ingest needs a dozen fields of an event whose
    /// breadcrumbs and extras are most of its bytes; the bytes themselves are stored verbatim).
    /// Throws when the document is not valid JSON; returns a non-object document whole.
    public static func parseObject(_ data: Data, keeping keep: Set<String>) throws(Failure) -> JSONValue {
        try document(data, selecting: JSONSelection(only: keep))
    }

    /// Parses a JSON object, building only what `selection` names at each level (JSONSelection).
    /// Throws when the document is not valid JSON; returns a non-object document whole.
    public static func parseObject(_ data: Data, selecting selection: JSONSelection) throws(Failure) -> JSONValue {
        try document(data, selecting: selection)
    }

    /// Checks that `data` is one valid JSON document without building it: memory stays constant
    /// whatever the document (a client's 64 KiB report cannot become a 1 MiB tree).
    public static func validate(_ data: Data) throws(Failure) {
        let result: Result<Void, Failure> = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var p = Parser(bytes: raw.bindMemory(to: UInt8.self))
            do throws(Failure) {
                p.skipSpace()
                try p.skipValue(depth: 0)
                p.skipSpace()
                guard p.pos == p.bytes.count else { throw p.fail("unexpected data after the document") }
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    /// One whole document; with a selection, a top-level object builds only what it names.
    private static func document(_ data: Data, selecting selection: JSONSelection?) throws(Failure) -> JSONValue {
        let result: Result<JSONValue, Failure> = data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            var p = Parser(bytes: raw.bindMemory(to: UInt8.self))
            do throws(Failure) {
                p.skipSpace()
                let v: JSONValue
                if let selection, p.pos < p.bytes.count && p.bytes[p.pos] == UInt8(ascii: "{") {
                    v = try p.object(depth: 0, selecting: selection)
                } else {
                    v = try p.value(depth: 0)
                }
                p.skipSpace()
                guard p.pos == p.bytes.count else { throw p.fail("unexpected data after the document") }
                return .success(v)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

extension JSONParser.Parser {
    /// Validates one value without building it (same rules as `value`).
    mutating func skipValue(depth: Int) throws(JSONParser.Failure) {
        guard depth < JSONParser.maxDepth else { throw fail("nested deeper than \(JSONParser.maxDepth)") }
        guard pos < bytes.count else { throw fail("unexpected end") }
        switch bytes[pos] {
        case UInt8(ascii: "{"):
            pos += 1
            skipSpace()
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "}") { pos += 1; return }
            while true {
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: "\"") else { throw fail("expected a string key") }
                try skipString()
                skipSpace()
                guard pos < bytes.count, bytes[pos] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                pos += 1
                skipSpace()
                try skipValue(depth: depth + 1)
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated object") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "}") { pos += 1; return }
                throw fail("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            pos += 1
            skipSpace()
            if pos < bytes.count && bytes[pos] == UInt8(ascii: "]") { pos += 1; return }
            while true {
                skipSpace()
                try skipValue(depth: depth + 1)
                skipSpace()
                guard pos < bytes.count else { throw fail("unterminated array") }
                if bytes[pos] == UInt8(ascii: ",") { pos += 1; continue }
                if bytes[pos] == UInt8(ascii: "]") { pos += 1; return }
                throw fail("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        default: _ = try scanNumber()
        }
    }

    mutating func skipString() throws(JSONParser.Failure) {
        pos += 1
        while pos < bytes.count {
            pos = stringStop(from: pos)
            guard pos < bytes.count else { break }
            let c = bytes[pos]
            if c == UInt8(ascii: "\"") { pos += 1; return }
            if c < 0x20 { throw fail("control character in string") }
            if c == UInt8(ascii: "\\") {
                pos += 1
                guard pos < bytes.count else { break }
                switch bytes[pos] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    pos += 1
                case UInt8(ascii: "u"):
                    pos += 1
                    _ = try hex4()
                default:
                    throw fail("bad escape")
                }
                continue
            }
            pos += 1
        }
        throw fail("unterminated string")
    }
}
