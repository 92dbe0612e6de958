// Swift and C++ demangling through the runtimes every Swift program already loads.
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// The Swift runtime's demangler (exported by libswiftCore and in its static archive alike). Its
/// arguments are pointers and integers only, passed alike by the C and Swift conventions.
@_silgen_name("swift_demangle")
private func runtimeSwiftDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
    _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?,
    _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// libstdc++'s demangler (the C++ ABI's `abi::__cxa_demangle`, an `extern "C"` symbol): pointers
/// only, passed alike by the C and Swift conventions. Returns a malloc'd string or nil.
@_silgen_name("__cxa_demangle")
private func libstdcxxDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ length: UnsafeMutablePointer<Int>?, _ status: UnsafeMutablePointer<Int32>?
) -> UnsafeMutablePointer<CChar>?

/// How much of a demangled name to show.
public enum DemangleStyle: Sendable {
    /// Everything the demangler prints (parameter types, generic specialisation notes).
    case full
    /// The function's qualified name without its signature: `Foo.bar(x:)`, `ns::f<int>`.
    case short
}

/// Whose printing of C++ names to follow: libstdc++'s (c++filt's, GNU) or llvm-symbolizer's
/// (`ItaniumLLVMDialect`). They parse alike and differ in a few spellings.
public enum ItaniumPrinter: Sendable {
    case gnu
    case llvm
}

/// Demangles Swift (`swift_demangle` from the Swift runtime) and Itanium C++ (`__cxa_demangle`
/// from libstdc++) symbol names. Both are linked directly: with the runtime and libstdc++ linked
/// statically (`--static-swift-stdlib`, the installed form; Package.swift) no dynamic symbol table
/// lists them, and a lookup at run time found nothing or loaded the shared libstdc++ for it.
/// Stateless and thread-safe.
public enum Demangler {
    /// True for names in a mangling scheme we know (Swift 4+, Swift 3, Itanium C++, Rust v0).
    public static func isMangled(_ name: String) -> Bool {
        isSwift(name) || name.hasPrefix("_Z") || name.hasPrefix("_R")
    }

    /// Whether a name starting with these two bytes can be in one of the manglings above: a
    /// byte test for the printing loop, where most C names (`_Py…`) then skip the demangler's
    /// cache. Admits every prefix `isMangled` accepts (`$…`, `_$…`, `_T…`, `_Z…`, `_R…`).
    @inline(__always) static func mayBeMangled(_ first: UInt8, _ second: UInt8) -> Bool {
        first == UInt8(ascii: "$")
            || (first == UInt8(ascii: "_")
                && (second == UInt8(ascii: "$") || second == UInt8(ascii: "T") || second == UInt8(ascii: "Z") || second == UInt8(ascii: "R")))
    }

    static func isSwift(_ name: String) -> Bool {
        name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_$s") || name.hasPrefix("_$S")
            || name.hasPrefix("_T0") || name.hasPrefix("$e") || name.hasPrefix("_$e")
    }

    /// The demangled name, or nil when `name` is not mangled or the demangler rejects it.
    public static func demangle(_ name: String, style: DemangleStyle = .full, cxx: ItaniumPrinter = .gnu) -> String? {
        let full: String?
        if isSwift(name) {
            full = callSwift(name)
        } else if name.hasPrefix("_Z") {
            full = cxx == .gnu ? callCxx(name) : ItaniumLLVMDialect.demangle(name, gnu: callCxx)
        } else if name.hasPrefix("_R") {
            return RustDemangler.demangle(name)  // already short: no signature to drop
        } else {
            full = nil
        }
        guard let full else { return nil }
        return style == .full ? full : shorten(full, swift: isSwift(name))
    }

    private static func callSwift(_ name: String) -> String? {
        name.withCString { p -> String? in
            guard let out = runtimeSwiftDemangle(p, strlen(p), nil, nil, 0) else { return nil }
            defer { free(out) }
            let s = String(cString: out)
            return s == name ? nil : s
        }
    }

    private static func callCxx(_ name: String) -> String? {
        // GCC clone suffixes (`.constprop.0`, `.cold`) are printed by libstdc++ as c++filt does
        // (" [clone .cold]").
        var status: Int32 = 0
        let out = name.withCString { libstdcxxDemangle($0, nil, nil, &status) }
        guard status == 0, let out else { return nil }
        defer { free(out) }
        return String(cString: out)
    }

    /// Rust's legacy mangling is Itanium's with a last path component `h` + 16 hex digits, a hash
    /// of the crate's metadata that changes with its version: `core::ptr::write_volatile::h3f…`.
    /// `demangled` (the demangler's text for `mangled`) without it: what grouping reads under its
    /// rules 3 (kept in, every release of a Rust program would group its crashes into new issues;
    /// rustc's own demangler `{:#}`, gdb and Sentry leave it out). Names as printed keep it, as
    /// c++filt and llvm-symbolizer print them.
    public static func withoutRustHash(_ demangled: String, mangled: String) -> String {
        func isHex(_ c: UInt8) -> Bool { (c >= 48 && c <= 57) || (c >= 97 && c <= 102) }
        // The mangled name's encoding (before a `.llvm.…` suffix) ends `17h` + 16 hex digits + `E`.
        let encoding = Array(mangled.utf8.prefix { $0 != UInt8(ascii: ".") })
        guard mangled.hasPrefix("_ZN"), encoding.count > 23, encoding.last == UInt8(ascii: "E") else { return demangled }
        let hash = encoding[(encoding.count - 20)..<(encoding.count - 1)]
        guard hash.starts(with: "17h".utf8), hash.dropFirst(3).allSatisfy(isHex) else { return demangled }
        guard let r = demangled.ranges(of: "::" + String(decoding: hash.dropFirst(2), as: UTF8.self)).last else { return demangled }
        return String(demangled[..<r.lowerBound]) + String(demangled[r.upperBound...])
    }

    /// A Swift async partial function read as the function it belongs to: "(1) suspend resume
    /// partial function for closure #2 in main" → "closure #2 in main" (also "await resume",
    /// without the number, and "async function pointer to"). Other names are returned unchanged;
    /// the raw (mangled) name stays in the frame's `raw_function`.
    public static func readableAsync(_ name: String) -> String { CrashEvent.readableFunctionName(name) }

    /// Drops the signature and specialisation prefixes: text after the top-level argument list
    /// (`(…) -> T`, ` const`) and leading `generic specialization <…> of ` notes.
    static func shorten(_ full: String, swift: Bool) -> String {
        var s = Substring(full)
        // Specialisation notes stack: "merged function signature specialization <…> of generic specialization <…> of f".
        let notes = ["generic specialization", "specialized ", "function signature specialization", "merged "]
        while true {
            if s.hasPrefix("partial apply for ") { s = s.dropFirst("partial apply for ".count); continue }
            guard notes.contains(where: { s.hasPrefix($0) }), let r = s.firstRange(of: " of ") else { break }
            s = s[r.upperBound...]
        }
        // Cut at the first top-level "(" that starts the parameter list; keep Swift argument
        // labels (`bar(x:y:)`) by turning "(x: Int, y: Int)" into "(x:y:)".
        var depth = 0
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if c == "<" {
                depth += 1
            } else if c == ">" {
                depth = max(0, depth - 1)
            }
            // Swift accessors print their type after " : " ("Array.subscript.getter : (Int) -> A").
            else if swift && c == " " && depth == 0 && s[i...].hasPrefix(" : ") {
                return String(s[s.startIndex..<i])
            } else if c == "(" && depth == 0 && i != s.startIndex && !s[s.startIndex..<i].hasSuffix("anonymous namespace") {
                // "(anonymous namespace)" and "{lambda(…)#1}" are names, not parameter lists.
                if s[s.startIndex..<i].last == "{" { i = s.index(after: i); continue }
                let head = String(s[s.startIndex..<i])
                guard swift else { return head }
                return head + "(" + swiftLabels(s[s.index(after: i)...]) + ")"
            }
            i = s.index(after: i)
        }
        return String(s)
    }

    /// "x: Swift.Int, _: Swift.String) -> …" → "x:_:".
    private static func swiftLabels(_ params: Substring) -> String {
        var labels = ""
        var depth = 0
        var current = ""
        var sawColon = false
        for c in params {
            if depth == 0 && c == ")" { break }
            if c == "(" || c == "<" || c == "[" { depth += 1 }
            if c == ")" || c == ">" || c == "]" { depth -= 1 }
            if depth == 0 && c == ":" && !sawColon { labels += current.trimmingSpaces + ":"; sawColon = true; continue }
            if depth == 0 && c == "," { if !sawColon { labels += "_:" }; current = ""; sawColon = false; continue }
            if !sawColon { current.append(c) }
        }
        if !sawColon && !current.trimmingSpaces.isEmpty { labels += "_:" }
        return labels
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
