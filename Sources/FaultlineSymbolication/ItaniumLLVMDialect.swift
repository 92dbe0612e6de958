// C++ names as llvm-symbolizer prints them, from libstdc++'s `__cxa_demangle`.
//
// Address mode promises llvm-symbolizer's bytes. libstdc++'s demangler (libiberty's printer) and
// LLVM's (ItaniumDemangle) parse the same grammar but print some nodes differently; no C library
// on a Debian machine exports LLVM's printer with a C interface, so the GNU text is rewritten
// where the two printers are known to differ:
//   GNU                                       LLVM
//   f() [clone .cold.3]                       f() (.cold.3)          (whole '.' suffix, one group)
//   A<B<int> >, operator< <int>               A<B<int>>, operator<<int>
//   {lambda(int)#1}, {lambda()#3}             'lambda'(int), 'lambda1'()
//   {unnamed type#2}                          'unnamed0'
//   decltype (x), decltype(nullptr)           decltype(x), std::nullptr_t
//   reference temporary #0 for x              reference temporary for x
//   TLS wrapper function for x                thread-local wrapper routine for x
//   void (* (int))(long)                      void (*(int))(long)
//   float __vector(4)                         float vector[4]
//   void ( swiftcall*)(int)                   void (int) swiftcall*  (a vendor-qualified function)
// Names outside these forms print alike. The server's pages and events keep the GNU forms
// (c++filt's, which existing issues were grouped and titled with).
#if canImport(Glibc)
    import Glibc
#endif

enum ItaniumLLVMDialect {
    /// Split points tried per name (each is a demangler call): a real name has a few; a hostile one
    /// must not cost a demangle per byte.
    static let maxTries = 64
    /// Longest discriminator read ("#123}"); a longer digit run is not one the demangler printed.
    static let maxDigits = 9
    /// Longest text the closure, unnamed-type and return-type rewrites scan (each is linear per
    /// occurrence); real names are far shorter, and a longer one is printed as libstdc++ spells it.
    static let maxRewrittenBytes = 16_384

    /// `name` (an Itanium `_Z` name, possibly with a '.' suffix) demangled as LLVM prints it, or
    /// nil when the demangler rejects it (llvm-symbolizer then prints the name as it is).
    static func demangle(_ name: String, gnu: (String) -> String?) -> String? {
        let (encoding, suffix) = split(name, gnu: gnu)
        guard let encoding, !llvmRejects(encoding), var text = gnu(encoding) ?? llvmOnlySpecialName(encoding, gnu: gnu) else { return nil }
        if encoding.hasPrefix("_ZZ") && text.utf8.count <= maxRewrittenBytes {
            text = withEnclosingReturnType(text, localName: encoding, gnu: gnu)
        }
        var llvm = rewrite(text)
        if isInheritingConstructor(encoding) { llvm = inheritingConstructor(llvm) }
        return suffix.isEmpty ? llvm : llvm + " (" + suffix + ")"
    }

    /// Forms GCC emits and libstdc++ reads that LLVM's parser refuses, so llvm-symbolizer prints
    /// the name mangled: an unresolved name whose type is `std::`-qualified (`srSt…`, as in
    /// `enable_if<std::__is_bitwise_relocatable<T>::value>`); LLVM accepts only a template
    /// parameter, a decltype or a substitution there. Recognised where an expression starts
    /// (after `X`, `I`, `E` or `L`, or after an operator's code: `ntsrSt…` is
    /// `!std::__is_scalar<…>::__value`) and a length-prefixed name follows, not inside an identifier.
    ///
    /// Also the special names libstdc++ reads and LLVM's parser does not know (`GT` transaction
    /// clones, `GA` hidden aliases, `TF` typeinfo functions, Java's `TJ` and `Gr`).
    private static func llvmRejects(_ encoding: String) -> Bool {
        for prefix in ["_ZGT", "_ZGA", "_ZTF", "_ZTJ", "_ZGr"] where encoding.hasPrefix(prefix) { return true }
        let b = Array(encoding.utf8)
        guard b.count > 5 else { return false }
        for i in 1..<(b.count - 4)
        where b[i] == UInt8(ascii: "s") && b[i + 1] == UInt8(ascii: "r") && b[i + 2] == UInt8(ascii: "S") && b[i + 3] == UInt8(ascii: "t") {
            // `St` then a length-prefixed name; inside an identifier ("readLsrStatus") it is not.
            guard b[i + 4] >= 48 && b[i + 4] <= 57 else { continue }
            let before = b[i - 1]
            if before == UInt8(ascii: "X") || before == UInt8(ascii: "I") || before == UInt8(ascii: "E") || before == UInt8(ascii: "L") { return true }
            if i >= 3, operatorCodes.contains(String(decoding: b[(i - 2)..<i], as: UTF8.self)) {
                let context = b[i - 3]
                if context == UInt8(ascii: "X") || context == UInt8(ascii: "I") || context == UInt8(ascii: "E") || context == UInt8(ascii: "L") { return true }
            }
        }
        return false
    }

    /// Whether the encoding's name ends in an inheriting constructor: `CI1`, `CI2` or `CI4`
    /// after a name component (a length-prefixed identifier or a template argument list's `E`).
    private static func isInheritingConstructor(_ encoding: String) -> Bool {
        let b = Array(encoding.utf8)
        guard b.count > 6 else { return false }
        for i in 1..<(b.count - 3) where b[i] == UInt8(ascii: "C") && b[i + 1] == UInt8(ascii: "I") {
            let kind = b[i + 2]
            guard kind == UInt8(ascii: "1") || kind == UInt8(ascii: "2") || kind == UInt8(ascii: "4") else { continue }
            let next = b[i + 3]
            // The base class follows: a nested name, a substitution or a length-prefixed name.
            guard next == UInt8(ascii: "N") || next == UInt8(ascii: "S") || (48...57).contains(next) else { continue }
            let before = b[i - 1]
            if before == UInt8(ascii: "E") || (97...122).contains(before) || (65...90).contains(before) || (48...57).contains(before) || before == 95 {
                return true
            }
        }
        return false
    }

    /// The operators of an expression (`<operator-name>` codes) whose operand may be an unresolved
    /// name: unary and binary arithmetic, logical and comparison operators.
    private static let operatorCodes: Set<String> = [
        "nt", "ng", "ps", "co", "ad", "de", "aa", "oo", "eq", "ne", "lt", "gt", "le", "ge", "ss", "pl", "mi", "ml", "dv",
        "rm", "an", "or", "eo", "ls", "rs"
    ]

    /// The special names LLVM reads and this libstdc++ (GCC 12) does not: a reference temporary
    /// with the ABI's sequence number and closing `_` (`GR <object name> [<seq-id>] _`, what GCC
    /// emits for `const int& r = 42;`), and a C++20 module's initializer (`GI <module-name>`).
    private static func llvmOnlySpecialName(_ encoding: String, gnu: (String) -> String?) -> String? {
        let b = Array(encoding.utf8)
        if encoding.hasPrefix("_ZGR"), b.count > 5, b[b.count - 1] == UInt8(ascii: "_") {
            // The object name is self-delimiting; the seq-id after it is base 36 in digits and
            // capitals. The longest run of those is tried as the seq-id first, then shorter ones (a
            // nested name ends with `E`, which is also a seq-id digit).
            let name = b[4..<(b.count - 1)]
            var run = 0
            while run < name.count, run < 8, let c = name.dropLast(run).last, (48...57).contains(c) || (65...90).contains(c) { run += 1 }
            for strip in stride(from: run, through: 0, by: -1) {
                let object = "_Z" + String(decoding: name.dropLast(strip), as: UTF8.self)
                if let text = gnu(object) { return "reference temporary for " + text }
            }
            return nil
        }
        if encoding.hasPrefix("_ZGI") { return moduleInitializer(b[4...]) }
        return nil
    }

    /// `W <source-name>` parts, a `P` after the `W` marking a partition: "initializer for module
    /// a.b:c". Nil for anything else (substitutions included), which then prints mangled.
    private static func moduleInitializer(_ b: ArraySlice<UInt8>) -> String? {
        var i = b.startIndex
        var text = "initializer for module "
        var first = true
        while i < b.endIndex {
            guard b[i] == UInt8(ascii: "W") else { return nil }
            i += 1
            var separator = first ? "" : "."
            if i < b.endIndex, b[i] == UInt8(ascii: "P") {
                guard !first else { return nil }
                separator = ":"
                i += 1
            }
            var length = 0
            while i < b.endIndex, (48...57).contains(b[i]), length < 1 << 20 { length = length * 10 + Int(b[i] - 48); i += 1 }
            guard length > 0, b.endIndex - i >= length else { return nil }
            text += separator + String(decoding: b[i..<(i + length)], as: UTF8.self)
            i += length
            first = false
        }
        return first ? nil : text
    }

    /// LLVM parses the encoding and takes everything from the next '.' on as one suffix. The
    /// encoding's end is where the grammar ends, not the first '.': a source name is length-prefixed
    /// and may itself hold dots (Rust's legacy names do), so each '.' is tried left to right and the
    /// first prefix that demangles is the encoding (none: the dots are all inside it).
    private static func split(_ name: String, gnu: (String) -> String?) -> (String?, String) {
        let bytes = Array(name.utf8)
        guard bytes.contains(UInt8(ascii: ".")) else { return (name, "") }
        var tries = 0
        for (i, b) in bytes.enumerated() where b == UInt8(ascii: ".") && i > 2 {
            tries += 1
            if tries > maxTries { break }
            let head = String(decoding: bytes[..<i], as: UTF8.self)
            if gnu(head) != nil { return (head, String(decoding: bytes[i...], as: UTF8.self)) }
        }
        return (name, "")
    }

    /// A local name (`_ZZ <function> E <entity>`: a lambda's `_FUN`, a local class's method) whose
    /// enclosing function is a template carries that function's return type in the mangling; LLVM
    /// prints it ("int f<int>(int)::'lambda'()::_FUN()"), GNU leaves it out. The enclosing
    /// function demangled on its own gives the type: its text is `R P` where the local name's text
    /// starts with `P::`.
    private static func withEnclosingReturnType(_ text: String, localName: String, gnu: (String) -> String?) -> String {
        let bytes = Array(localName.utf8)
        var tries = 0
        for k in 3..<bytes.count where bytes[k] == UInt8(ascii: "E") {
            tries += 1
            if tries > maxTries { break }
            guard let enclosing = gnu("_Z" + String(decoding: bytes[3..<k], as: UTF8.self)) else { continue }
            let e = Array(enclosing.utf8), t = Array(text.utf8), separator = Array("::".utf8)
            if t.starts(with: e), t[e.count...].starts(with: separator) { return text }  // no return type: nothing differs
            for (i, c) in e.enumerated() where c == UInt8(ascii: " ") && i > 0 {
                let rest = e[(i + 1)...]
                if t.starts(with: rest), t[rest.count...].starts(with: separator) {
                    return String(decoding: e[...i], as: UTF8.self) + text
                }
            }
        }
        return text
    }

    /// The GNU printer's text with LLVM's spelling of the nodes listed above.
    static func rewrite(_ gnu: String) -> String {
        var s = Array(gnu.utf8)
        rewrite(&s)
        return String(decoding: s, as: UTF8.self)
    }

    /// The same rewrite on the text's UTF-8 bytes. Every form it looks for is ASCII, and a name is
    /// read a byte at a time as LLVM's printer writes it: a search by Character would also cost a
    /// grapheme-break test per byte, which made demangling most of a C++ binary's symbolication.
    static func rewrite(_ s: inout [UInt8]) {
        if s.count <= maxRewrittenBytes {
            if s.contains(bytes: "{lambda(") { rewriteClosures(&s) }
            if s.contains(bytes: "{unnamed type#") { rewriteUnnamedTypes(&s) }
        }
        // GNU separates a '>' or '<' from the template bracket that follows it ("> > >" takes two
        // passes); each pass shortens the text, so the loop ends.
        for (gnuPair, llvmPair) in [("> >", ">>"), ("< <", "<<")] {
            while s.replaceAll(gnuPair, with: llvmPair) {}
        }
        if s.contains(bytes: "decltype") {
            s.replaceAll("decltype(nullptr)", with: "std::nullptr_t")
            s.replaceAll("decltype (", with: "decltype(")
        }
        // A function returning a function pointer: "void (* (int))(long)" → "void (*(int))(long)".
        s.replaceAll("(* (", with: "(*(")
        if s.contains(bytes: "__vector(") { rewriteVectors(&s) }
        if s.count <= maxRewrittenBytes && s.contains(bytes: "( ") { rewriteVendorQualifiedFunctions(&s) }
        if s.replacePrefix("TLS wrapper function for ", with: "thread-local wrapper routine for ") {
        } else {
            s.replacePrefix("TLS init function for ", with: "thread-local initialization routine for ")
        }
        if s.starts(with: "reference temporary #".utf8), let r = s.firstIndex(of: Array(" for ".utf8), from: 0) {
            s.replaceSubrange(0..<(r + 5), with: "reference temporary for ".utf8)
        }
        // An empty template argument pack: GNU prints an empty element ("<F, , void>").
        s.replaceAll(", , ", with: ", ")
    }

    /// An inheriting constructor (`CI1`/`CI2`/`CI4 <base>`): GNU names it after the base class
    /// ("Derived<…>::Base(…)"), LLVM after its own class ("Derived<…>::Derived(…)"); a
    /// constructor template keeps its arguments in both ("Derived::Derived<double>(…)").
    static func inheritingConstructor(_ text: String) -> String {
        let b = Array(text.utf8)
        guard b.count <= maxRewrittenBytes else { return text }
        // A constructor has no return type: its parameter list is the first '(' outside template
        // arguments; the name before it is the last component, the class the one before that.
        var angle = 0
        var open = -1
        for (i, c) in b.enumerated() {
            switch c {
            case UInt8(ascii: "<"): angle += 1
            case UInt8(ascii: ">"): angle -= 1
            case UInt8(ascii: "(") where angle == 0: open = i
            default: break
            }
            if open >= 0 { break }
        }
        guard open > 0 else { return text }
        func lastSeparator(before end: Int) -> Int? {
            var depth = 0
            var i = end - 1
            while i > 0 {
                switch b[i] {
                case UInt8(ascii: ">"): depth += 1
                case UInt8(ascii: "<"): depth -= 1
                case UInt8(ascii: ":") where depth == 0 && b[i - 1] == UInt8(ascii: ":"): return i - 1
                default: break
                }
                i -= 1
            }
            return nil
        }
        guard let nameStart = lastSeparator(before: open) else { return text }
        let classStart = lastSeparator(before: nameStart).map { $0 + 2 } ?? 0
        var classEnd = nameStart
        if let angleAt = b[classStart..<nameStart].firstIndex(of: UInt8(ascii: "<")) { classEnd = angleAt }
        guard classEnd > classStart else { return text }
        // A constructor template's own arguments ("Base<double>(double, int)", GNU names the base
        // without its class's arguments) stay: "D1::D1<double>(double, int)".
        let ownArguments = b[(nameStart + 2)..<open].firstIndex(of: UInt8(ascii: "<")) ?? open
        return String(decoding: b[..<(nameStart + 2)] + b[classStart..<classEnd] + b[ownArguments...], as: UTF8.self)
    }

    /// LLVM numbers closures and unnamed types by their mangled discriminator: the first is bare,
    /// the second "0", the n-th "n-2"; GNU counts from "#1".
    private static func discriminator(_ gnuNumber: Int) -> String {
        gnuNumber <= 1 ? "" : String(gnuNumber - 2)
    }

    /// The discriminator "N}" starting at `from`: N (at most `maxDigits` digits) and the index of
    /// the '}', or nil when the text there is not one.
    private static func numberAndBrace(_ s: [UInt8], from: Int) -> (Int, Int)? {
        var j = from
        var number = 0
        while j < s.count, s[j] >= 48, s[j] <= 57, j - from < maxDigits { number = number * 10 + Int(s[j] - 48); j += 1 }
        guard j > from, j < s.count, s[j] == UInt8(ascii: "}") else { return nil }
        return (number, j)
    }

    /// "{lambda(P)#N}" → "'lambdaD'(P)". The innermost (last) closure first, so a closure type in
    /// another's parameters is already rewritten when the outer one is.
    private static func rewriteClosures(_ s: inout [UInt8]) {
        let open = Array("{lambda(".utf8)
        var limit = s.count
        while let start = lastRange(of: open, in: s, before: limit) {
            limit = start
            let close = closingParenthesis(s, from: start + open.count - 1) ?? -1
            // ")#N}" must follow; otherwise the text is not a closure name and is left alone.
            guard close > 0, close + 2 < s.count, s[close + 1] == UInt8(ascii: "#") else { continue }
            guard let (number, j) = numberAndBrace(s, from: close + 2) else { continue }
            let params = s[(start + open.count)..<close]
            let replacement = Array("'lambda\(discriminator(number))'(".utf8) + params + [UInt8(ascii: ")")]
            s.replaceSubrange(start...j, with: replacement)
        }
    }

    /// "{unnamed type#N}" → "'unnamedD'".
    private static func rewriteUnnamedTypes(_ s: inout [UInt8]) {
        let open = Array("{unnamed type#".utf8)
        var limit = s.count
        while let start = lastRange(of: open, in: s, before: limit) {
            limit = start
            guard let (number, j) = numberAndBrace(s, from: start + open.count) else { continue }
            s.replaceSubrange(start...j, with: Array("'unnamed\(discriminator(number))'".utf8))
        }
    }

    /// "T __vector(N)" (GCC's vector extension type, `Dv N _ T`) → "T vector[N]".
    private static func rewriteVectors(_ s: inout [UInt8]) {
        let open = Array("__vector(".utf8)
        var limit = s.count
        while let start = lastRange(of: open, in: s, before: limit) {
            limit = start
            var j = start + open.count
            while j < s.count, s[j] >= 48, s[j] <= 57, j - start - open.count < maxDigits { j += 1 }
            guard j > start + open.count, j < s.count, s[j] == UInt8(ascii: ")") else { continue }
            s.replaceSubrange(start...j, with: Array("vector[".utf8) + s[(start + open.count)..<j] + [UInt8(ascii: "]")])
        }
    }

    /// A pointer to a function type with a vendor qualifier (clang's calling conventions: `PU9swiftcallFv…E`):
    /// GNU prints the qualifier in the pointer's parentheses, "R ( swiftcall*)(A)"; LLVM after
    /// the parameter list, "R (A) swiftcall*".
    private static func rewriteVendorQualifiedFunctions(_ s: inout [UInt8]) {
        func isIdentifier(_ c: UInt8) -> Bool { (65...90).contains(c) || (97...122).contains(c) || (48...57).contains(c) || c == 95 }
        var limit = s.count
        while let start = lastRange(of: Array("( ".utf8), in: s, before: limit) {
            limit = start
            // "( " qualifier "*)(" parameters ")"
            var i = start + 2
            let nameStart = i
            while i < s.count, isIdentifier(s[i]) { i += 1 }
            guard i > nameStart, i + 2 < s.count, s[i] == UInt8(ascii: "*"), s[i + 1] == UInt8(ascii: ")"), s[i + 2] == UInt8(ascii: "(") else { continue }
            let qualifier = s[nameStart..<i]
            guard let close = closingParenthesis(s, from: i + 2) else { continue }
            let parameters = s[(i + 3)..<close]
            let replacement = [UInt8(ascii: "(")] + parameters + Array(") ".utf8) + qualifier + [UInt8(ascii: "*")]
            s.replaceSubrange(start...close, with: replacement)
        }
    }

    /// The index of the ')' that closes the '(' at `open`, or nil when none does.
    private static func closingParenthesis(_ s: [UInt8], from open: Int) -> Int? {
        var depth = 0
        for i in open..<s.count {
            if s[i] == UInt8(ascii: "(") { depth += 1 }
            if s[i] == UInt8(ascii: ")") {
                depth -= 1
                if depth == 0 { return i }
            }
        }
        return nil
    }

    /// The last start of `needle` in `haystack` before `limit`.
    private static func lastRange(of needle: [UInt8], in haystack: [UInt8], before limit: Int) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = min(limit - 1, haystack.count - needle.count)
        while i >= 0 {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i -= 1
        }
        return nil
    }
}

extension [UInt8] {
    /// Where `needle` first starts at or after `from`.
    fileprivate func firstIndex(of needle: [UInt8], from: Int) -> Int? {
        guard !needle.isEmpty, count - from >= needle.count else { return nil }
        return withUnsafeBufferPointer { hay in
            needle.withUnsafeBufferPointer { n -> Int? in
                // memchr for the first byte, then a compare: Glibc's module does not export memmem.
                let base = hay.baseAddress!
                var i = from
                let last = hay.count - n.count
                while i <= last {
                    guard let hit = memchr(base + i, Int32(n[0]), last - i + 1) else { return nil }
                    i = UnsafeRawPointer(hit) - UnsafeRawPointer(base)
                    if memcmp(base + i, n.baseAddress!, n.count) == 0 { return i }
                    i += 1
                }
                return nil
            }
        }
    }

    fileprivate func contains(bytes needle: StaticString) -> Bool {
        firstIndex(of: Array(UnsafeBufferPointer(start: needle.utf8Start, count: needle.utf8CodeUnitCount)), from: 0) != nil
    }

    /// Replaces every occurrence of `target`, left to right without overlaps (as one pass of a
    /// text replacement does); true when any was replaced.
    @discardableResult
    fileprivate mutating func replaceAll(_ target: String, with replacement: String) -> Bool {
        let t = Array(target.utf8)
        guard var at = firstIndex(of: t, from: 0) else { return false }
        let r = Array(replacement.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var copied = 0
        while true {
            out.append(contentsOf: self[copied..<at])
            out.append(contentsOf: r)
            copied = at + t.count
            guard let next = firstIndex(of: t, from: copied) else { break }
            at = next
        }
        out.append(contentsOf: self[copied...])
        self = out
        return true
    }

    /// Replaces a leading `prefix`; true when the text started with it.
    @discardableResult
    fileprivate mutating func replacePrefix(_ prefix: String, with replacement: String) -> Bool {
        guard starts(with: prefix.utf8) else { return false }
        replaceSubrange(0..<prefix.utf8.count, with: replacement.utf8)
        return true
    }
}
