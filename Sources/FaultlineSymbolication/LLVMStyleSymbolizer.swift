// Address mode: addresses in, `llvm-symbolizer --inlines` style text out, byte for byte.
//
// For each input line: one `function` line and one `path:line:column` line per frame, innermost
// inlined frame first, then a blank line. Unknown parts print `??` and `??:0:0`, and so does a
// line that is not an address or is blank, as in llvm-symbolizer (21; version 14 echoed a blank
// line instead). This path writes bytes straight from the index (no String per frame) because it
// is the benchmark's.
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
        /// Lines that are neither an address nor blank.
        public var invalidLines = 0

        /// Adds the counts of another part of the same run.
        mutating func add(_ other: Summary) {
            addresses += other.addresses; unresolved += other.unresolved; invalidLines += other.invalidLines
        }
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
    ///
    /// The lines of `input` are read here once; `run(write:)` prints them without reading the
    /// text again (on 100,000 addresses a second parse was a few percent of a warm run).
    ///
    /// A large input's lookup order (`addressOrder`) is sorted on a second thread meanwhile: it
    /// needs only the input, and a warm load spends its time verifying the stored index.
    public init(objectFile: String, symbolicator: Symbolicator, input: UnsafeRawBufferPointer? = nil) throws(ELFError) {
        let parsed = input.map { LLVMStyleSymbolizer.lines(of: $0) }
        parsedInput = parsed
        var addresses: [UInt64]? = nil
        if let parsed {
            var a: [UInt64] = []
            a.reserveCapacity(parsed.lineAddress.count)
            for (i, address) in parsed.lineAddress.enumerated() where parsed.isAddress[i] { a.append(address) }
            addresses = a
        }
        final class Sorting: @unchecked Sendable { var order: [(UInt64, Int32)]? }
        let sorting = Sorting()
        let sorted = DispatchSemaphore(value: 0)
        var sortingElsewhere = false
        if let parsed, parsed.lineAddress.count >= LLVMStyleSymbolizer.twoThreadLines, sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 {
            sortingElsewhere = DetachedThread.start {
                sorting.order = LLVMStyleSymbolizer.addressOrder(parsed.lineAddress, parsed.isAddress)
                sorted.signal()
            }
        }
        defer {
            if sortingElsewhere { sorted.wait() }
            inputOrder = sorting.order
        }
        switch try symbolicator.loadModule(objectFile: objectFile, addresses: addresses) {
        case .success(let m): module = m
        case .failure(let e): module = nil; unresolvedReason = e.reason
        }
    }

    /// Inputs of this many lines or more are sorted, looked up and printed on two threads.
    static let twoThreadLines = 8192

    /// The lookup order of the input given to `init`, when it was sorted there.
    private var inputOrder: [(UInt64, Int32)]? = nil

    /// Why nothing was found for the object (nil when something was).
    public private(set) var unresolvedReason: UnresolvedReason?
    /// Debug information that exists but is not used, and why (`Symbolicator.notes`).
    public var notes: [String] { module?.notes ?? [] }

    /// The lines of an input: each one's address, and whether it is one.
    struct ParsedLines {
        var lineAddress: [UInt64] = []
        var isAddress: [Bool] = []
        /// Lines with nothing but spaces, tabs or a CR: not addresses, but not counted as lines
        /// that could not be read (llvm-symbolizer prints their unknown record without a word).
        var blankLines = 0
    }

    /// The input given to `init`, already split and read.
    private let parsedInput: ParsedLines?

    /// Splits `input` into lines and reads each line's address. The arrays get their room at
    /// once (the line count first, by memchr): grown by doubling, each larger copy was new pages
    /// faulted in.
    static func lines(of input: UnsafeRawBufferPointer) -> ParsedLines {
        var p = ParsedLines()
        var newlines = 0
        if var at = input.baseAddress {
            let end = at + input.count
            while at < end, let found = memchr(at, 10, end - at) {
                newlines += 1
                at = UnsafeRawPointer(found) + 1
            }
        }
        p.lineAddress.reserveCapacity(newlines + 1)
        p.isAddress.reserveCapacity(newlines + 1)
        forEachLine(input) { a, b in
            let address = a < b ? parseAddress(input, a, b) : nil
            p.lineAddress.append(address ?? 0)
            p.isAddress.append(address != nil)
            if a == b { p.blankLines += 1 }
        }
        return p
    }

    /// Calls `body` with the bounds of each line, surrounding spaces, tabs and CRs trimmed (an
    /// empty range for a blank line). A final newline ends the last line; it starts no other.
    /// A NUL byte ends a line's text, as llvm-symbolizer reads it (a C string).
    static func forEachLine(_ input: UnsafeRawBufferPointer, _ body: (Int, Int) -> Void) {
        @inline(__always) func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 13 }
        guard let base = input.baseAddress else { return }
        var lineStart = 0
        let n = input.count
        let hasNUL = memchr(base, 0, n) != nil  // one pass here, none per line in the usual input
        while lineStart < n {
            let lineEnd = memchr(base + lineStart, 10, n - lineStart).map { UnsafeRawPointer($0) - base } ?? n
            var textEnd = lineEnd
            if hasNUL, let nul = memchr(base + lineStart, 0, lineEnd - lineStart) { textEnd = UnsafeRawPointer(nul) - base }
            var a = lineStart, b = textEnd
            while a < b && isSpace(input[a]) { a += 1 }
            while b > a && isSpace(input[b - 1]) { b -= 1 }
            lineStart = lineEnd + 1
            body(a, b)
        }
    }

    /// Whether any debug information or symbols were found for the object.
    public var hasDebugInformation: Bool { module != nil }
    /// Whether DWARF (not only ELF symbols) answers lookups.
    public var hasDWARF: Bool { module?.index.hasDWARF ?? false }
    /// Demangle Swift names too (default). Off matches llvm-symbolizer, which demangles C++ only.
    public var demangleSwift = true
    /// Which function line each frame gets (`--functions=`).
    public var functionNames = FunctionNameKind.linkage

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
        run(LLVMStyleSymbolizer.lines(of: input), write: write)
    }

    /// Whether `init` was given the input (then `run(write:)` prints it).
    public var hasInput: Bool { parsedInput != nil }

    /// Like `run(input:write:)` for the input given to `init`.
    public func run(write: @escaping (UnsafeRawBufferPointer) -> Void) -> Summary {
        run(parsedInput ?? ParsedLines(), order: inputOrder, write: write)
    }

    private func run(_ parsed: ParsedLines, order: [(UInt64, Int32)]? = nil, write: @escaping (UnsafeRawBufferPointer) -> Void) -> Summary {
        var summary = Summary()
        // Phase 1 (done by `lines(of:)`): split lines and read addresses.
        let lineAddress = parsed.lineAddress, isAddress = parsed.isAddress
        // Phase 2: look up in address order, each distinct address once.
        let order = order ?? LLVMStyleSymbolizer.addressOrder(lineAddress, isAddress)
        // A partial index (lazy cold path) grows when an address needs a unit it lacks. It grows
        // for every address first, so one index answers all lookups and the printing below (the
        // string references of frames belong to the index that produced them).
        // (A full index needs no check per address: each took the module's lock and a reference.)
        if let module {
            for (address, _) in order {
                guard module.isPartial else { break }
                _ = module.index(for: address)
            }
        }
        let index = module?.index
        let found = LLVMStyleSymbolizer.lookUp(order, lines: lineAddress.count, in: index)
        // Phase 3: print in input order. A large input is formatted on two threads in turns of
        // `linesPerChunk` lines (chunks 0, 2, 4… here, 1, 3, 5… on the other thread), each chunk
        // written as soon as the one before it is: each thread reuses one chunk's memory.
        // (Formatting the second half whole into memory while the first was written held
        // half the output at once: its pages faulted in, copied and unmapped again.)
        let lines = lineAddress.count
        let printing = ChunkPrinting(self, write, index, isAddress, found, lines: lines)
        let done = DispatchSemaphore(value: 0)
        if lines >= LLVMStyleSymbolizer.twoThreadLines && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2
            && DetachedThread.start({
                printing.printChunks(of: 1)
                done.signal()
            })
        {
            printing.printChunks(of: 0)
            done.wait()
        } else {
            var output = OutputBuffer(write: write)
            var printer = LLVMStyleFramePrinter(index: index, demangle: demangle, demangleSwift: demangleSwift, functionNames: functionNames)
            printing.first = printer.print(0..<lines, isAddress, found.slices, found.frames, into: &output)
            output.flush()
        }
        for s in [printing.first, printing.second] {
            summary.add(s)
        }
        summary.invalidLines -= parsed.blankLines  // printed as the others, but not unreadable
        return summary
    }

    /// Frames of every address line: `frames` holds them all, `slices[line]` says which are the
    /// line's (an empty slice when nothing is known). Large inputs are looked up on two threads,
    /// each taking one half of the address order (on one thread the lookups are a visible part
    /// of a large cold run).
    static func lookUp(_ order: [(UInt64, Int32)], lines: Int, in index: DWARFIndex?) -> (frames: FoundFrames, slices: [(start: Int32, count: Int32)]) {
        guard let index else { return (FoundFrames(first: [], second: []), Array(repeating: (0, 0), count: lines)) }
        // Each half writes its own frames and the slices of its own lines only.
        final class Found: @unchecked Sendable {
            var first: [IndexedFrame] = [], second: [IndexedFrame] = []
            let slices: UnsafeMutableBufferPointer<(start: Int32, count: Int32)>
            init(lines: Int) { slices = .allocate(capacity: lines); slices.initialize(repeating: (0, 0)) }
            deinit { slices.deallocate() }
        }
        let parts = order.count >= LLVMStyleSymbolizer.twoThreadLines && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 ? 2 : 1
        let found = Found(lines: lines)
        // The loop touches no reference count: with a retain of the index (or of `found`, or of
        // the order array) per lookup, the two threads fought over the same counters' cache line
        // (docs/SYMBOLICATION.md, "Round 7"). `found` and `order` outlive the
        // threads; the unowned(unsafe) index is kept alive by `withExtendedLifetime`.
        struct Shared: @unchecked Sendable {
            unowned(unsafe) let index: DWARFIndex
            let order: UnsafeBufferPointer<(UInt64, Int32)>
            let slices: UnsafeMutableBufferPointer<(start: Int32, count: Int32)>
        }
        withExtendedLifetime(index) {
            order.withUnsafeBufferPointer { order in
                let shared = Shared(index: index, order: order, slices: found.slices)
                LLVMStyleSymbolizer.perform(parts) { part in
                    let index = shared.index, order = shared.order, slices = shared.slices
                    var all: [IndexedFrame] = [], frames: [IndexedFrame] = []
                    let mine = (order.count * part / parts)..<(order.count * (part + 1) / parts)
                    // Room for a few frames per address at once: grown by doubling, the array was
                    // copied again and again, each larger copy's pages faulted in anew. Room not
                    // used is never touched (a large allocation is mapped, not written).
                    all.reserveCapacity(mine.count * 4)
                    var previous: (address: UInt64, start: Int32, count: Int32)? = nil
                    for k in mine {
                        let (address, line) = order[k]
                        if let p = previous, p.address == address { slices[Int(line)] = (p.start, p.count); continue }
                        index.lookup(address, into: &frames)
                        let entry = (Int32(all.count), Int32(frames.count))
                        // Through a buffer pointer: appending the array itself took a reference to it.
                        frames.withUnsafeBufferPointer { all.append(contentsOf: $0) }
                        slices[Int(line)] = entry
                        previous = (address, entry.0, entry.1)
                    }
                    if part == 0 { found.first = all } else { found.second = all }
                }
            }
        }
        if parts == 2 {  // the second half's slices start after the first half's frames
            let base = Int32(found.first.count)
            for k in (order.count / 2)..<order.count { found.slices[Int(order[k].1)].start += base }
        }
        return (FoundFrames(first: found.first, second: found.second), Array(found.slices))
    }

    /// The frames both lookup threads found, read as one array (`first` then `second`) without
    /// joining them: the copy was a visible part of a warm 100k-address run.
    struct FoundFrames {
        let first: [IndexedFrame]
        let second: [IndexedFrame]

        @inline(__always) subscript(k: Int) -> IndexedFrame {
            k < first.count ? first[k] : second[k - first.count]
        }
    }

    /// `body(0)` here, or `body(0)` and `body(1)` on two threads: a run with few addresses does
    /// not start libdispatch (its start-up reads the CPU topology from /sys).
    static func perform(_ parts: Int, _ body: @Sendable (Int) -> Void) {
        if parts == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: parts, execute: body) }
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

    /// An address as llvm-symbolizer reads it: an optional `CODE ` prefix, then a first word
    /// that is a number whose radix comes from its prefix (`0x` hex, `0b` binary, `0o` or a leading `0`
    /// octal, else decimal — so `1170` is decimal, exactly as llvm-symbolizer reads it).
    public static func parseAddress(_ buf: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UInt64? {
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
        if radix == 16 {
            // The common case (`0x…`, what every tool writes), a shift and no multiply per digit.
            while i < end {
                let c = buf[i]
                var d = c &- 48
                if d > 9 {
                    d = (c | 0x20) &- 97  // a-f, either case
                    guard d < 6 else { return nil }
                    d += 10
                }
                guard v >> 60 == 0 else { return nil }
                v = v << 4 | UInt64(d)
                i += 1
            }
            return v
        }
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
}
