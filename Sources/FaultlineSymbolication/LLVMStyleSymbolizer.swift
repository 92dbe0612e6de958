// Address mode: addresses in, `llvm-symbolizer --inlines` style text out, byte for byte.
//
// For each input line: one `function` line and one `path:line:column` line per frame, innermost
// inlined frame first, then a blank line. Unknown parts print `??` and `??:0:0`, and so does a
// line that is not an address, as in llvm-symbolizer. This path writes bytes straight from the
// index (no String per frame) because it is the benchmark's.
import Dispatch
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

public struct LLVMStyleSymbolizer {
    /// Counts from one run.
    public struct Summary: Sendable {
        public var addresses = 0
        public var unresolved = 0
        public var invalidLines = 0
    }

    private var module: LoadedModule?
    /// Demangle names (default). Off prints linkage names as stored.
    public var demangle = true

    /// Loads (or builds) the index for `objectFile`, finding its debug file through the
    /// symbolicator's locator. Throws when the object is not a readable ELF file; a missing debug
    /// file is not an error (every address then prints `??`).
    ///
    /// `input`, when given, is the text `run` will read: a cold start then parses only the
    /// compile units covering its addresses (the lazy cold path, LazyIndex.swift).
    public init(objectFile: String, symbolicator: Symbolicator, input: UnsafeRawBufferPointer? = nil) throws(ELFError) {
        let addresses = input.map { LLVMStyleSymbolizer.addresses(in: $0) }
        switch try symbolicator.loadModule(objectFile: objectFile, addresses: addresses) {
        case .success(let m): module = m
        case .failure(let e): module = nil; unresolvedReason = e.reason
        }
    }

    /// Why nothing was found for the object (nil when something was).
    public private(set) var unresolvedReason: UnresolvedReason?
    /// Debug information that exists but is not used, and why (`Symbolicator.notes`).
    public var notes: [String] { module?.notes ?? [] }

    /// The addresses of the lines of `input` that are addresses.
    static func addresses(in input: UnsafeRawBufferPointer) -> [UInt64] {
        var out: [UInt64] = []
        forEachLine(input) { a, b in if let v = parseAddress(input, a, b) { out.append(v) } }
        return out
    }

    /// Calls `body` with the bounds of each non-blank line, surrounding spaces, tabs and CRs trimmed.
    static func forEachLine(_ input: UnsafeRawBufferPointer, _ body: (Int, Int) -> Void) {
        @inline(__always) func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 13 }
        var lineStart = 0
        let n = input.count
        while lineStart < n {
            var lineEnd = lineStart
            while lineEnd < n && input[lineEnd] != 10 { lineEnd += 1 }
            var a = lineStart, b = lineEnd
            while a < b && isSpace(input[a]) { a += 1 }
            while b > a && isSpace(input[b - 1]) { b -= 1 }
            lineStart = lineEnd + 1
            if a < b { body(a, b) }  // blank lines produce nothing
        }
    }

    /// Whether any debug information or symbols were found for the object.
    public var hasDebugInformation: Bool { module != nil }
    /// Whether DWARF (not only ELF symbols) answers lookups.
    public var hasDWARF: Bool { module?.index.hasDWARF ?? false }
    /// Demangle Swift names too (default). Off matches llvm-symbolizer, which demangles C++ only.
    public var demangleSwift = true

    /// Symbolizes every line of `input` (one address per line, see `parseAddress`) and appends
    /// the text to `output`.
    ///
    /// Lookups run in address order, not input order: consecutive searches then walk the same
    /// parts of the tables, which stay in cache (random order costs a cache miss per probe on a
    /// large library). Results are kept per line and printed in input order.
    public func run(input: UnsafeRawBufferPointer, output: inout [UInt8]) -> Summary {
        var collected: [UInt8] = []
        let summary = run(input: input) { collected.append(contentsOf: $0) }
        output.append(contentsOf: collected)
        return summary
    }

    /// Like `run(input:output:)`, handing the text to `write` in chunks of about 256 KiB so a
    /// large run never holds its whole output in memory.
    public func run(input: UnsafeRawBufferPointer, write: @escaping (UnsafeRawBufferPointer) -> Void) -> Summary {
        var summary = Summary()
        // Phase 1: split lines and read addresses.
        var lineAddress: [UInt64] = []
        var isAddress: [Bool] = []
        LLVMStyleSymbolizer.forEachLine(input) { a, b in
            let address = LLVMStyleSymbolizer.parseAddress(input, a, b)
            lineAddress.append(address ?? 0)
            isAddress.append(address != nil)
        }
        // Phase 2: look up in address order, each distinct address once.
        let order = LLVMStyleSymbolizer.addressOrder(lineAddress, isAddress)
        // A partial index (lazy cold path) grows when an address needs a unit it lacks. It grows
        // for every address first, so one index answers all lookups and the printing below (the
        // string references of frames belong to the index that produced them).
        if let module { for (address, _) in order { _ = module.index(for: address) } }
        let index = module?.index
        let found = LLVMStyleSymbolizer.lookUp(order, lines: lineAddress.count, in: index)
        let all = found.frames, slice = found.slices
        // Phase 3: print in input order.
        var nameCache: [UInt32: [UInt8]] = [:]
        var output = OutputBuffer(write: write)
        defer { output.flush() }
        for i in lineAddress.indices {
            guard isAddress[i] else {
                // llvm-symbolizer prints an unknown record for a line it cannot read.
                unknownRecord.withUnsafeBytes { output.append($0) }
                summary.invalidLines += 1
                continue
            }
            summary.addresses += 1
            let (start, count) = slice[i]
            if count == 0 {
                summary.unresolved += 1
                unknownRecord.withUnsafeBytes { output.append($0) }
                continue
            }
            for k in Int(start)..<Int(start + count) {
                let f = all[k]
                appendName(f.name, index!, &nameCache, &output)
                output.append(10)
                appendLocation(f, index!, &output)
                output.append(10)
            }
            output.append(10)
        }
        return summary
    }

    /// Frames of every address line: `frames` holds them all, `slices[line]` says which are the
    /// line's (an empty slice when nothing is known). Large inputs are looked up on two threads,
    /// each taking one half of the address order (on one thread the lookups are a visible part
    /// of a large cold run).
    static func lookUp(_ order: [(UInt64, Int32)], lines: Int, in index: DWARFIndex?) -> (frames: [IndexedFrame], slices: [(start: Int32, count: Int32)]) {
        // Each half writes its own frames and the slices of its own lines only.
        final class Found: @unchecked Sendable {
            var first: [IndexedFrame] = [], second: [IndexedFrame] = []
            let slices: UnsafeMutableBufferPointer<(start: Int32, count: Int32)>
            init(lines: Int) { slices = .allocate(capacity: lines); slices.initialize(repeating: (0, 0)) }
            deinit { slices.deallocate() }
        }
        let parts = order.count >= 8192 && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 ? 2 : 1
        let found = Found(lines: lines)
        DispatchQueue.concurrentPerform(iterations: parts) { part in
            var all: [IndexedFrame] = [], frames: [IndexedFrame] = []
            var previous: (address: UInt64, start: Int32, count: Int32)? = nil
            for k in (order.count * part / parts)..<(order.count * (part + 1) / parts) {
                let (address, line) = order[k]
                if let p = previous, p.address == address { found.slices[Int(line)] = (p.start, p.count); continue }
                if let index { index.lookup(address, into: &frames) } else { frames.removeAll() }
                let entry = (Int32(all.count), Int32(frames.count))
                all.append(contentsOf: frames)
                found.slices[Int(line)] = entry
                previous = (address, entry.0, entry.1)
            }
            if part == 0 { found.first = all } else { found.second = all }
        }
        if parts == 2 {  // the second half's slices start after the first half's frames
            let base = Int32(found.first.count)
            for k in (order.count / 2)..<order.count { found.slices[Int(order[k].1)].start += base }
        }
        return (found.first + found.second, Array(found.slices))
    }

    /// The address lines as (address, line), sorted by address. When address and line number fit
    /// one 64-bit key together (addresses below 2^(64 - bits of the line count), as every ELF
    /// virtual address and user-space address on x86-64 does), a radix sort of those keys; it was
    /// ~7% of a 100k-address run as a sort of tuples.
    static func addressOrder(_ lineAddress: [UInt64], _ isAddress: [Bool]) -> [(UInt64, Int32)] {
        let lineBits = max(1, UInt64.bitWidth - UInt64(lineAddress.count).leadingZeroBitCount)
        var maxAddress: UInt64 = 0
        for i in lineAddress.indices where isAddress[i] { maxAddress = max(maxAddress, lineAddress[i]) }
        guard maxAddress >> (64 - lineBits) == 0 else {
            var order: [(UInt64, Int32)] = []
            for i in lineAddress.indices where isAddress[i] { order.append((lineAddress[i], Int32(i))) }
            order.sort { $0.0 < $1.0 }
            return order
        }
        var keys: [UInt64] = []
        keys.reserveCapacity(lineAddress.count)
        for i in lineAddress.indices where isAddress[i] { keys.append(lineAddress[i] << lineBits | UInt64(i)) }
        radixSort(&keys)
        let mask = (UInt64(1) << lineBits) - 1
        return keys.map { ($0 >> lineBits, Int32(truncatingIfNeeded: $0 & mask)) }
    }

    /// LSD radix sort, 16 bits a pass; a pass whose digit is the same in every key is skipped.
    static func radixSort(_ keys: inout [UInt64]) {
        guard keys.count > 64 else { keys.sort(); return }
        var other = [UInt64](repeating: 0, count: keys.count)
        var counts = [Int](repeating: 0, count: 1 << 16)
        for shift in stride(from: UInt64(0), to: 64, by: 16) {
            for i in counts.indices { counts[i] = 0 }
            for k in keys { counts[Int(truncatingIfNeeded: (k >> shift) & 0xFFFF)] += 1 }
            if counts[Int(truncatingIfNeeded: (keys[0] >> shift) & 0xFFFF)] == keys.count { continue }
            var sum = 0
            for i in counts.indices { let c = counts[i]; counts[i] = sum; sum += c }
            for k in keys {
                let d = Int(truncatingIfNeeded: (k >> shift) & 0xFFFF)
                other[counts[d]] = k
                counts[d] += 1
            }
            swap(&keys, &other)
        }
    }

    private let unknownRecord: [UInt8] = Array("??\n??:0:0\n\n".utf8)

    /// An address as llvm-symbolizer reads it: an optional `CODE ` prefix, then a first word
    /// that is a number whose radix comes from its prefix (`0x` hex, `0b` binary, `0o` or a leading `0`
    /// octal, else decimal — so `1170` is decimal, exactly as llvm-symbolizer reads it).
    static func parseAddress(_ buf: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UInt64? {
        var i = start
        if end - i > 5 && buf[i] == 67 && buf[i + 1] == 79 && buf[i + 2] == 68 && buf[i + 3] == 69 && (buf[i + 4] == 32 || buf[i + 4] == 9) {
            i += 5  // "CODE "
            while i < end && (buf[i] == 32 || buf[i] == 9) { i += 1 }
        }
        // Only the first word is the address (llvm-symbolizer ignores what follows it).
        var end = end
        var j = i
        while j < end && buf[j] != 32 && buf[j] != 9 { j += 1 }
        end = j
        var radix: UInt64 = 10
        if end - i >= 2 && buf[i] == 48 {
            switch buf[i + 1] {
            case 120, 88: radix = 16; i += 2
            case 98, 66: radix = 2; i += 2
            case 111, 79: radix = 8; i += 2
            default: radix = 8; i += 1
            }
        }
        guard i < end else { return nil }
        var v: UInt64 = 0
        while i < end {
            let c = buf[i]
            let d: UInt64
            switch c {
            case 48...57: d = UInt64(c - 48)
            case 97...102: d = UInt64(c - 87)
            case 65...70: d = UInt64(c - 55)
            default: return nil
            }
            guard d < radix else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: radix)
            let (a, o2) = m.addingReportingOverflow(d)
            guard !o1, !o2 else { return nil }
            v = a
            i += 1
        }
        return v
    }

    private func appendName(_ ref: UInt32, _ index: DWARFIndex, _ cache: inout [UInt32: [UInt8]], _ out: inout OutputBuffer) {
        guard ref != IndexTables.none, let raw = index.cString(ref), raw.count > 0 else {
            out.append(63); out.append(63); return
        }
        // Only names in a known mangling need the demangler; C names are copied as they are.
        let first = raw[0]
        if demangle && (first == UInt8(ascii: "_") || first == UInt8(ascii: "$")) {
            if let cached = cache[ref] { cached.withUnsafeBytes { out.append($0) }; return }
            let s = String(decoding: raw, as: UTF8.self)
            let skip = !demangleSwift && Demangler.isSwift(s)
            let bytes = Array((skip ? s : Demangler.demangle(s) ?? s).utf8)
            cache[ref] = bytes
            bytes.withUnsafeBytes { out.append($0) }
            return
        }
        out.append(UnsafeRawBufferPointer(raw))
    }

    private func appendLocation(_ f: IndexedFrame, _ index: DWARFIndex, _ out: inout OutputBuffer) {
        guard let path = index.cString(index.fileString(f.file)) else {
            out.append(63); out.append(63); out.append(58); out.append(48); out.append(58); out.append(48)  // ??:0:0
            return
        }
        out.append(UnsafeRawBufferPointer(path))
        out.append(58)
        appendDecimal(f.line, &out)
        out.append(58)
        appendDecimal(f.column, &out)
    }

    @inline(__always) private func appendDecimal(_ v: UInt32, _ out: inout OutputBuffer) {
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
