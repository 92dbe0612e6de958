// Rust's v0 symbol names (`_R…`, RFC 2603), demangled as llvm-symbolizer prints them.
//
// rustc emits v0 names for the standard library it ships and for crates built with
// `-C symbol-mangling-version=v0`; llvm-symbolizer demangles them (LLVM's RustDemangle), and
// neither the Swift runtime nor libstdc++ reads them. The printed form is rustc-demangle's
// short one, which LLVM's follows: no crate disambiguators or hashes, `<T as Trait>` for trait
// impls, `{closure#N}` for closures, generic arguments after `::<` in a value path and `<` in a
// type. Legacy Rust names (`_ZN…17h…E`) are Itanium names and go through the C++ demangler,
// as in llvm-symbolizer.
enum RustDemangler {
    /// Deepest nesting of paths, types and backreferences followed (LLVM's limit).
    static let maxDepth = 500
    /// Longest text produced: backreferences can repeat a part many times, and a hostile name must
    /// not make a demangled one megabytes long.
    static let maxOutputBytes = 64 * 1024

    /// `name` demangled, or nil when it is not a v0 name this reader accepts (printed as it is).
    static func demangle(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "_"), bytes[1] == UInt8(ascii: "R") else { return nil }
        // A vendor suffix (`.llvm.123`) follows the first '.'; LLVM prints it in parentheses.
        let rest = bytes[2...]
        let dot = rest.firstIndex(of: UInt8(ascii: "."))
        var p = Parser(Array(rest[..<(dot ?? rest.endIndex)]))
        guard var text = p.symbol(), !text.isEmpty else { return nil }
        if let dot { text += " (" + String(decoding: rest[dot...], as: UTF8.self) + ")" }
        return text
    }
}

private struct Parser {
    let input: [UInt8]
    var position = 0
    var output: [UInt8] = []
    /// False while a part is parsed but not printed (an impl's path, the instantiating crate).
    var printing = true
    var failed = false
    var depth = 0
    /// Lifetimes bound by the binders around the current type (`for<'a>`).
    var boundLifetimes = 0

    init(_ input: [UInt8]) { self.input = input }

    mutating func symbol() -> String? {
        if let c = peek(), isDigit(c) { return nil }  // an encoding version: none is defined
        path(inType: false)
        if !failed, position < input.count {
            // The instantiating crate: parsed, never printed.
            let was = printing
            printing = false
            path(inType: false)
            printing = was
        }
        guard !failed, position == input.count, output.count <= RustDemangler.maxOutputBytes else { return nil }
        return String(decoding: output, as: UTF8.self)
    }

    // MARK: Input

    func peek() -> UInt8? { position < input.count ? input[position] : nil }

    mutating func consume(_ c: UInt8) -> Bool {
        guard peek() == c else { return false }
        position += 1
        return true
    }

    mutating func next() -> UInt8? {
        guard position < input.count else { failed = true; return nil }
        defer { position += 1 }
        return input[position]
    }

    func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    func isLower(_ c: UInt8) -> Bool { c >= 97 && c <= 122 }
    func isUpper(_ c: UInt8) -> Bool { c >= 65 && c <= 90 }

    /// `_` is 0; otherwise base-62 digits (0-9, a-z, A-Z) and `_`, the value plus one.
    mutating func base62() -> UInt64 {
        if consume(UInt8(ascii: "_")) { return 0 }
        var value: UInt64 = 0
        while let c = peek(), c != UInt8(ascii: "_") {
            position += 1
            let digit: UInt64
            if isDigit(c) {
                digit = UInt64(c - 48)
            } else if isLower(c) {
                digit = UInt64(c - 97) + 10
            } else if isUpper(c) {
                digit = UInt64(c - 65) + 36
            } else {
                failed = true
                return 0
            }
            let (m, o1) = value.multipliedReportingOverflow(by: 62)
            let (s, o2) = m.addingReportingOverflow(digit)
            guard !o1, !o2 else { failed = true; return 0 }
            value = s
        }
        guard consume(UInt8(ascii: "_")) else { failed = true; return 0 }
        let (v, o) = value.addingReportingOverflow(1)
        guard !o else { failed = true; return 0 }
        return v
    }

    /// An optional `tag <base-62-number>`: 0 when absent, else the number plus one.
    mutating func optionalBase62(_ tag: UInt8) -> UInt64 {
        guard consume(tag) else { return 0 }
        let v = base62()
        let (r, o) = v.addingReportingOverflow(1)
        guard !o else { failed = true; return 0 }
        return r
    }

    /// `0`, or a digit 1-9 and more digits.
    mutating func decimal() -> Int? {
        guard let c = peek(), isDigit(c) else { failed = true; return nil }
        if c == 48 { position += 1; return 0 }
        var value = 0
        while let d = peek(), isDigit(d) {
            position += 1
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(Int(d - 48))
            guard !o1, !o2 else { failed = true; return nil }
            value = s
        }
        return value
    }

    /// `[u] <decimal> [_] <bytes>`: the identifier's text (punycode decoded).
    mutating func undisambiguatedIdentifier() -> [UInt8] {
        let puny = consume(UInt8(ascii: "u"))
        guard let length = decimal() else { return [] }
        _ = consume(UInt8(ascii: "_"))
        guard length <= input.count - position else { failed = true; return [] }
        let raw = Array(input[position..<(position + length)])
        position += length
        guard raw.allSatisfy({ isDigit($0) || isLower($0) || isUpper($0) || $0 == UInt8(ascii: "_") }) else { failed = true; return [] }
        if puny {
            guard let decoded = Punycode.decodeRust(raw) else { failed = true; return [] }
            return decoded
        }
        return raw
    }

    // MARK: Output

    mutating func print(_ s: String) {
        guard printing, !failed else { return }
        output.append(contentsOf: s.utf8)
        if output.count > RustDemangler.maxOutputBytes { failed = true }
    }

    mutating func print(_ bytes: [UInt8]) {
        guard printing, !failed else { return }
        output.append(contentsOf: bytes)
        if output.count > RustDemangler.maxOutputBytes { failed = true }
    }

    /// Items up to an `E`, each parsed by `item`, `separator` printed between them; the count.
    @discardableResult
    mutating func list(separator: String, _ item: (inout Parser) -> Void) -> Int {
        var count = 0
        while !failed, !consume(UInt8(ascii: "E")) {
            if count > 0 { print(separator) }
            item(&self)
            count += 1
            if position >= input.count { failed = true }
        }
        return count
    }

    mutating func enter() -> Bool {
        depth += 1
        if depth > RustDemangler.maxDepth { failed = true }
        return !failed
    }

    /// Runs `body` at the position a backreference names (strictly before the `B`), then
    /// continues after the reference.
    /// Not followed while nothing is printed (LLVM's rule: a part that is not printed is not read
    /// twice).
    mutating func backref(_ body: (inout Parser) -> Void) {
        let start = position - 1  // the `B`
        let target = base62()
        guard !failed, target < UInt64(start) else { failed = true; return }
        guard printing else { return }
        let resume = position
        position = Int(target)
        body(&self)
        position = resume
    }

    // MARK: Paths

    /// Returns whether a generic argument list was left open (`leaveOpen`: a dyn trait's
    /// associated-type bindings are added inside it).
    @discardableResult
    mutating func path(inType: Bool, leaveOpen: Bool = false) -> Bool {
        guard enter() else { return false }
        defer { depth -= 1 }
        guard let tag = next() else { return false }
        switch tag {
        case UInt8(ascii: "C"):
            _ = optionalBase62(UInt8(ascii: "s"))
            print(undisambiguatedIdentifier())
        case UInt8(ascii: "M"):
            implPath()
            print("<")
            type()
            print(">")
        case UInt8(ascii: "X"):
            implPath()
            print("<")
            type()
            print(" as ")
            path(inType: true)
            print(">")
        case UInt8(ascii: "Y"):
            print("<")
            type()
            print(" as ")
            path(inType: true)
            print(">")
        case UInt8(ascii: "N"):
            guard let namespace = next(), isLower(namespace) || isUpper(namespace) else { failed = true; return false }
            path(inType: inType)
            let disambiguator = optionalBase62(UInt8(ascii: "s"))
            let name = undisambiguatedIdentifier()
            if isUpper(namespace) {
                print("::{")
                if namespace == UInt8(ascii: "C") {
                    print("closure")
                } else if namespace == UInt8(ascii: "S") {
                    print("shim")
                } else {
                    print([namespace])
                }
                if !name.isEmpty {
                    print(":")
                    print(name)
                }
                print("#\(disambiguator)")
                print("}")
            } else if !name.isEmpty {
                print("::")
                print(name)
            }
        case UInt8(ascii: "I"):
            path(inType: inType)
            if !inType { print("::") }
            print("<")
            list(separator: ", ") { $0.genericArgument() }
            if leaveOpen { return true }
            print(">")
        case UInt8(ascii: "B"):
            var open = false
            backref { p in open = p.path(inType: inType, leaveOpen: leaveOpen) }
            return open
        default:
            failed = true
        }
        return false
    }

    /// An impl's path: parsed, not printed (the printed form names only the type and trait).
    mutating func implPath() {
        let was = printing
        printing = false
        _ = optionalBase62(UInt8(ascii: "s"))
        path(inType: false)
        printing = was
    }

    mutating func genericArgument() {
        if consume(UInt8(ascii: "L")) {
            lifetime(base62())
        } else if consume(UInt8(ascii: "K")) {
            constant()
        } else {
            type()
        }
    }

    mutating func lifetime(_ index: UInt64) {
        guard !failed else { return }
        print("'")
        if index == 0 {
            print("_")
            return
        }
        guard index - 1 < UInt64(boundLifetimes) else { failed = true; return }
        let depth = UInt64(boundLifetimes) - index
        if depth < 26 {
            print([UInt8(97 + depth)])
        } else {
            print("z\(depth - 26 + 1)")
        }
    }

    /// `G <base-62-number>`: binds that many plus one lifetimes, printed `for<'a, 'b> `.
    mutating func binder() -> Int {
        guard consume(UInt8(ascii: "G")) else { return 0 }
        let count = base62() &+ 1
        guard !failed, count <= UInt64(input.count) else { failed = true; return 0 }
        print("for<")
        for i in 0..<Int(count) {
            if i > 0 { print(", ") }
            boundLifetimes += 1
            lifetime(1)
        }
        print("> ")
        return Int(count)
    }

    // MARK: Types

    static let basicTypes: [UInt8: String] = [
        UInt8(ascii: "a"): "i8", UInt8(ascii: "b"): "bool", UInt8(ascii: "c"): "char", UInt8(ascii: "d"): "f64",
        UInt8(ascii: "e"): "str", UInt8(ascii: "f"): "f32", UInt8(ascii: "h"): "u8", UInt8(ascii: "i"): "isize",
        UInt8(ascii: "j"): "usize", UInt8(ascii: "l"): "i32", UInt8(ascii: "m"): "u32", UInt8(ascii: "n"): "i128",
        UInt8(ascii: "o"): "u128", UInt8(ascii: "s"): "i16", UInt8(ascii: "t"): "u16", UInt8(ascii: "u"): "()",
        UInt8(ascii: "v"): "...", UInt8(ascii: "x"): "i64", UInt8(ascii: "y"): "u64", UInt8(ascii: "z"): "!",
        UInt8(ascii: "p"): "_"
    ]

    mutating func type() {
        guard enter() else { return }
        defer { depth -= 1 }
        guard let tag = peek() else { failed = true; return }
        if let basic = Parser.basicTypes[tag] {
            position += 1
            print(basic)
            return
        }
        position += 1
        switch tag {
        case UInt8(ascii: "A"):
            print("[")
            type()
            print("; ")
            constant()
            print("]")
        case UInt8(ascii: "S"):
            print("[")
            type()
            print("]")
        case UInt8(ascii: "T"):
            print("(")
            if list(separator: ", ", { $0.type() }) == 1 { print(",") }
            print(")")
        case UInt8(ascii: "R"), UInt8(ascii: "Q"):
            print("&")
            if consume(UInt8(ascii: "L")) {
                let index = base62()
                if index != 0 {
                    lifetime(index)
                    print(" ")
                }
            }
            if tag == UInt8(ascii: "Q") { print("mut ") }
            type()
        case UInt8(ascii: "P"):
            print("*const ")
            type()
        case UInt8(ascii: "O"):
            print("*mut ")
            type()
        case UInt8(ascii: "F"):
            functionSignature()
        case UInt8(ascii: "D"):
            dynBounds()
            if consume(UInt8(ascii: "L")) {
                let index = base62()
                if index != 0 {
                    print(" + ")
                    lifetime(index)
                }
            } else {
                failed = true
            }
        case UInt8(ascii: "B"):
            backref { p in p.type() }
        default:
            position -= 1
            path(inType: true)
        }
    }

    mutating func functionSignature() {
        let saved = boundLifetimes
        defer { boundLifetimes = saved }
        _ = binder()
        if consume(UInt8(ascii: "U")) { print("unsafe ") }
        if consume(UInt8(ascii: "K")) {
            print("extern \"")
            if consume(UInt8(ascii: "C")) {
                print("C")
            } else {
                let abi = undisambiguatedIdentifier()
                print(abi.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: "-") : $0 })
            }
            print("\" ")
        }
        print("fn(")
        list(separator: ", ") { $0.type() }
        print(")")
        if consume(UInt8(ascii: "u")) { return }  // returns ()
        print(" -> ")
        type()
    }

    mutating func dynBounds() {
        let saved = boundLifetimes
        defer { boundLifetimes = saved }
        print("dyn ")
        _ = binder()
        list(separator: " + ") { $0.dynTrait() }
    }

    mutating func dynTrait() {
        var open = path(inType: true, leaveOpen: true)
        while !failed, consume(UInt8(ascii: "p")) {
            print(open ? ", " : "<")
            open = true
            print(undisambiguatedIdentifier())
            print(" = ")
            type()
        }
        if open { print(">") }
    }

    // MARK: Constants

    mutating func constant() {
        guard enter() else { return }
        defer { depth -= 1 }
        if consume(UInt8(ascii: "p")) {
            print("_")
            return
        }
        if consume(UInt8(ascii: "B")) {
            backref { p in p.constant() }
            return
        }
        guard let tag = next() else { return }
        switch tag {
        case UInt8(ascii: "a"), UInt8(ascii: "s"), UInt8(ascii: "l"), UInt8(ascii: "x"), UInt8(ascii: "n"), UInt8(ascii: "i"),
            UInt8(ascii: "h"), UInt8(ascii: "t"), UInt8(ascii: "m"), UInt8(ascii: "y"), UInt8(ascii: "o"), UInt8(ascii: "j"):
            if consume(UInt8(ascii: "n")) { print("-") }
            let (value, digits) = hexNumber()
            if digits.count <= 16 {
                print(String(value))
            } else {
                print("0x")
                print(digits)
            }
        case UInt8(ascii: "b"):
            let (value, digits) = hexNumber()
            guard digits.count == 1, value <= 1 else { failed = true; return }
            print(value == 0 ? "false" : "true")
        case UInt8(ascii: "c"):
            let (value, digits) = hexNumber()
            guard !failed, digits.count <= 6 else { failed = true; return }
            print(Parser.quoted(value, digits: digits))
        default:
            failed = true
        }
    }

    /// `{hex digit} _`: the value (its low 64 bits) and the digits. `0` stands alone; at least one
    /// digit.
    mutating func hexNumber() -> (UInt64, [UInt8]) {
        let start = position
        guard let first = peek(), isDigit(first) || (first >= 97 && first <= 102) else { failed = true; return (0, []) }
        if consume(UInt8(ascii: "0")) {
            guard consume(UInt8(ascii: "_")) else { failed = true; return (0, []) }
            return (0, [UInt8(ascii: "0")])
        }
        var value: UInt64 = 0
        while !failed, !consume(UInt8(ascii: "_")) {
            guard let c = next() else { return (0, []) }
            let d: UInt64
            if isDigit(c) {
                d = UInt64(c - 48)
            } else if c >= 97 && c <= 102 {
                d = UInt64(c - 87)
            } else {
                failed = true
                return (0, [])
            }
            value = value &<< 4 | d
        }
        return (value, Array(input[start..<(position - 1)]))
    }

    /// A char constant as LLVM prints it: printable ASCII as itself (with `\t`, `\r`, `\n`, `\\`
    /// and `\'` escapes), anything else as `\u{…}` with the mangled hex digits.
    static func quoted(_ value: UInt64, digits: [UInt8]) -> String {
        switch value {
        case 0x09: return "'\\t'"
        case 0x0D: return "'\\r'"
        case 0x0A: return "'\\n'"
        case 0x5C: return "'\\\\'"
        case 0x27: return "'\\''"
        case 0x20...0x7E: return "'" + String(UnicodeScalar(UInt8(value))) + "'"
        default: return "'\\u{" + String(decoding: digits, as: UTF8.self) + "}'"
        }
    }
}

/// RFC 3492 punycode as Rust's v0 identifiers write it: the last `_` (not `-`) separates the
/// basic code points from the encoded ones.
enum Punycode {
    static func decodeRust(_ encoded: [UInt8]) -> [UInt8]? {
        var output: [UInt32] = []
        var rest = encoded[...]
        if let split = encoded.lastIndex(of: UInt8(ascii: "_")) {
            for c in encoded[..<split] {
                guard (48...57).contains(c) || (65...90).contains(c) || (97...122).contains(c) || c == 95 else { return nil }
                output.append(UInt32(c))
            }
            rest = encoded[(split + 1)...]
        }
        let base: UInt32 = 36, tmin: UInt32 = 1, tmax: UInt32 = 26, skew: UInt32 = 38, damp: UInt32 = 700
        var n: UInt32 = 128, bias: UInt32 = 72, i: UInt32 = 0, firstTime = true
        var it = rest.makeIterator()
        var pending = it.next()
        while pending != nil {
            let oldI = i
            var w: UInt32 = 1
            var k = base
            while true {
                guard let c = pending else { return nil }
                pending = it.next()
                let digit: UInt32
                if c >= 97 && c <= 122 {
                    digit = UInt32(c - 97)
                } else if c >= 48 && c <= 57 {
                    digit = UInt32(c - 48) + 26
                } else {
                    return nil
                }
                let (dw, o1) = digit.multipliedReportingOverflow(by: w)
                let (ni, o2) = i.addingReportingOverflow(dw)
                guard !o1, !o2 else { return nil }
                i = ni
                let t = k <= bias ? tmin : (k >= bias + tmax ? tmax : k - bias)
                if digit < t { break }
                let (nw, o3) = w.multipliedReportingOverflow(by: base - t)
                guard !o3 else { return nil }
                w = nw
                k += base
            }
            let count = UInt32(output.count + 1)
            var delta = firstTime ? (i - oldI) / damp : (i - oldI) / 2
            firstTime = false
            delta += delta / count
            var kk: UInt32 = 0
            while delta > ((base - tmin) * tmax) / 2 {
                delta /= base - tmin
                kk += base
            }
            bias = kk + ((base - tmin + 1) * delta) / (delta + skew)
            let (nn, o4) = n.addingReportingOverflow(i / count)
            guard !o4 else { return nil }
            n = nn
            i %= count
            guard output.count < 4096 else { return nil }
            output.insert(n, at: Int(i))
            i += 1
        }
        var bytes: [UInt8] = []
        for v in output {
            guard let scalar = Unicode.Scalar(v) else { return nil }
            bytes.append(contentsOf: String(Character(scalar)).utf8)
        }
        return bytes
    }
}
