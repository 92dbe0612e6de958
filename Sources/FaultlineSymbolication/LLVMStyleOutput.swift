// Address mode: addresses in, `llvm-symbolizer --inlines` style text out, byte for byte.
//
// For each input line: one `function` line and one `path:line:column` line per frame, innermost
// inlined frame first, then a blank line. Unknown parts print `??` and `??:0:0`. A line that is
// not an address is echoed back followed by a blank line, as llvm-symbolizer does. This path
// writes bytes straight from the index (no String per frame) because it is the benchmark's.
import FaultlineProtocol

public struct LLVMStyleSymbolizer {
    /// Counts from one run.
    public struct Summary: Sendable {
        public var addresses = 0
        public var unresolved = 0
        public var invalidLines = 0
    }

    private let module: LoadedModule?
    /// Demangle names (default). Off prints linkage names as stored.
    public var demangle = true

    /// Loads (or builds) the index for `objectFile`, finding its debug file through the
    /// symbolicator's locator. Throws when the object is not a readable ELF file; a missing debug
    /// file is not an error (every address then prints `??`).
    public init(objectFile: String, symbolicator: Symbolicator) throws(ELFError) {
        module = try symbolicator.loadedModule(objectFile: objectFile)
    }

    /// Whether any debug information or symbols were found for the object.
    public var hasDebugInformation: Bool { module != nil }

    /// Symbolizes every line of `input` (addresses as `0x…` hex) and appends the text to `output`.
    public func run(input: UnsafeRawBufferPointer, output: inout [UInt8]) -> Summary {
        var summary = Summary()
        var frames: [IndexedFrame] = []
        var nameCache: [UInt32: [UInt8]] = [:]
        var lineStart = 0
        let n = input.count
        output.reserveCapacity(output.count + n * 12)
        while lineStart < n {
            var lineEnd = lineStart
            while lineEnd < n && input[lineEnd] != 10 { lineEnd += 1 }
            var a = lineStart, b = lineEnd
            while a < b && isSpace(input[a]) { a += 1 }
            while b > a && isSpace(input[b - 1]) { b -= 1 }
            lineStart = lineEnd + 1
            if a == b { continue }   // blank lines produce nothing
            guard let address = LLVMStyleSymbolizer.parseAddress(input, a, b) else {
                // llvm-symbolizer echoes what it cannot parse.
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[a..<b]))
                output.append(10); output.append(10)
                summary.invalidLines += 1
                continue
            }
            summary.addresses += 1
            if let module { module.index.lookup(address, into: &frames) } else { frames.removeAll() }
            if frames.isEmpty {
                summary.unresolved += 1
                output.append(contentsOf: unknownRecord)
                continue
            }
            for f in frames {
                appendName(f.name, module!, &nameCache, &output)
                output.append(10)
                appendLocation(f, module!.index, &output)
                output.append(10)
            }
            output.append(10)
        }
        return summary
    }

    private let unknownRecord: [UInt8] = Array("??\n??:0:0\n\n".utf8)

    @inline(__always) private func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 13 }

    /// `0x1a2b` or `1a2b` hex (llvm-symbolizer also reads a bare hex number as hex when it has
    /// letters; Faultline always reads hex, which is what every address set uses).
    static func parseAddress(_ buf: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UInt64? {
        var i = start
        if end - i > 2 && buf[i] == 48 && (buf[i + 1] == 120 || buf[i + 1] == 88) { i += 2 }
        guard i < end, end - i <= 16 else { return nil }
        var v: UInt64 = 0
        while i < end {
            let c = buf[i]
            let d: UInt8
            switch c {
            case 48...57: d = c - 48
            case 97...102: d = c - 87
            case 65...70: d = c - 55
            default: return nil
            }
            v = v << 4 | UInt64(d)
            i += 1
        }
        return v
    }

    private func appendName(_ ref: UInt32, _ m: LoadedModule, _ cache: inout [UInt32: [UInt8]], _ out: inout [UInt8]) {
        guard ref != IndexTables.none, let raw = m.index.cString(ref), raw.count > 0 else {
            out.append(63); out.append(63); return
        }
        // Only names in a known mangling need the demangler; C names are copied as they are.
        let first = raw[0]
        if demangle && (first == UInt8(ascii: "_") || first == UInt8(ascii: "$")) {
            if let cached = cache[ref] { out.append(contentsOf: cached); return }
            let s = String(decoding: raw, as: UTF8.self)
            let bytes = Array((Demangler.demangle(s) ?? s).utf8)
            cache[ref] = bytes
            out.append(contentsOf: bytes)
            return
        }
        out.append(contentsOf: raw)
    }

    private func appendLocation(_ f: IndexedFrame, _ index: DWARFIndex, _ out: inout [UInt8]) {
        guard let path = index.cString(index.fileString(f.file)) else {
            out.append(contentsOf: [63, 63, 58, 48, 58, 48])   // ??:0:0
            return
        }
        out.append(contentsOf: path)
        out.append(58)
        appendDecimal(f.line, &out)
        out.append(58)
        appendDecimal(f.column, &out)
    }

    @inline(__always) private func appendDecimal(_ v: UInt32, _ out: inout [UInt8]) {
        if v < 10 { out.append(48 + UInt8(v)); return }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var n = 0
        var x = v
        withUnsafeMutableBytes(of: &digits) { d in
            while x > 0 { d[n] = 48 + UInt8(x % 10); x /= 10; n += 1 }
            while n > 0 { n -= 1; out.append(d[n]) }
        }
    }
}
