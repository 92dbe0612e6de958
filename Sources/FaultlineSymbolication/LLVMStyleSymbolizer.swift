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
    /// A large input is read and put in lookup order (`AddressOrder`) on a second thread while
    /// this one loads the module: a warm load (mapping and verifying the stored index) needs
    /// nothing from the input, and only a cold start waits for the addresses.
    public init(objectFile: String, symbolicator: Symbolicator, input: UnsafeRawBufferPointer? = nil) throws(ELFError) {
        guard let input else {
            try load(objectFile, symbolicator, upcoming: nil)
            return
        }
        let lineCount = LLVMStyleSymbolizer.lineCount(of: input)
        final class Reading: @unchecked Sendable {
            var parsed = ParsedLines()
            var order: AddressOrder? = nil
            let parsedSignal = DispatchSemaphore(value: 0), sortedSignal = DispatchSemaphore(value: 0)
            var waitedForParse = false
        }
        let reading = Reading()
        // The buffer outlives the thread: `init` waits for it (below) before returning or throwing.
        struct Bytes: @unchecked Sendable { let input: UnsafeRawBufferPointer }
        let bytes = Bytes(input: input)
        let elsewhere =
            lineCount >= LLVMStyleSymbolizer.twoThreadLines && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2
            && DetachedThread.start {
                reading.parsed = LLVMStyleSymbolizer.lines(of: bytes.input, lineCount: lineCount)
                reading.parsedSignal.signal()
                reading.order = AddressOrder(reading.parsed.lineAddress, reading.parsed.isAddress)
                reading.sortedSignal.signal()
            }
        if !elsewhere { reading.parsed = LLVMStyleSymbolizer.lines(of: input, lineCount: lineCount) }
        // The line count stands for the address count (the lines are still being read): lines
        // that are no address only make a run look less like a few lookups.
        let upcoming = Symbolicator.UpcomingLookups(count: lineCount) { _ in
            if elsewhere && !reading.waitedForParse {
                reading.parsedSignal.wait()
                reading.waitedForParse = true
            }
            let parsed = reading.parsed
            var a: [UInt64] = []
            a.reserveCapacity(parsed.lineAddress.count)
            for (i, address) in parsed.lineAddress.enumerated() where parsed.isAddress[i] { a.append(address) }
            return a
        }
        do {
            try load(objectFile, symbolicator, upcoming: upcoming)
        } catch {
            if elsewhere { reading.sortedSignal.wait() }
            throw error
        }
        if elsewhere { reading.sortedSignal.wait() }
        parsedInput = reading.parsed
        inputOrder = reading.order
    }

    private mutating func load(_ objectFile: String, _ symbolicator: Symbolicator, upcoming: Symbolicator.UpcomingLookups?) throws(ELFError) {
        switch try symbolicator.loadModule(objectFile: objectFile, upcoming: upcoming) {
        case .success(let m): module = m
        case .failure(let e): module = nil; unresolvedReason = e.reason
        }
    }

    /// Inputs of this many lines or more are sorted, looked up and printed on two threads.
    static let twoThreadLines = 8192

    /// The lookup order of the input given to `init`, when it was sorted there.
    private var inputOrder: AddressOrder? = nil

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
    private var parsedInput: ParsedLines? = nil

    /// The number of lines `lines(of:)` finds in `input` (a final newline starts no line).
    static func lineCount(of input: UnsafeRawBufferPointer) -> Int {
        guard var at = input.baseAddress, input.count > 0 else { return 0 }
        let end = at + input.count
        var newlines = 0
        while at < end, let found = memchr(at, 10, end - at) {
            newlines += 1
            at = UnsafeRawPointer(found) + 1
        }
        return at < end ? newlines + 1 : newlines
    }

    /// Splits `input` into lines and reads each line's address, as `parseAddress` reads the line
    /// with surrounding spaces, tabs and CRs trimmed (an empty line for a blank one). A final
    /// newline ends the last line; it starts no other. A NUL byte ends a line's text, as
    /// llvm-symbolizer reads it (a C string).
    ///
    /// The arrays are made at their final size at once (`lineCount`): grown by doubling, each
    /// larger copy was new pages faulted in. A line that is exactly `0x` (or `0X`) and up to 16 hex digits
    /// (what every tool writes) is read in one pass over its bytes; any other line goes the
    /// general way, and reads the same.
    static func lines(of input: UnsafeRawBufferPointer, lineCount: Int? = nil) -> ParsedLines {
        let lines = lineCount ?? LLVMStyleSymbolizer.lineCount(of: input)
        guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self), lines > 0 else { return ParsedLines() }
        let n = input.count
        let hasNUL = memchr(base, 0, n) != nil  // one pass here, none per line in the usual input
        var blankLines = 0
        var isAddress: [Bool] = []
        let lineAddress = [UInt64](unsafeUninitializedCapacity: lines) { addresses, filledAddresses in
            isAddress = [Bool](unsafeUninitializedCapacity: lines) { flags, filledFlags in
                hexDigitValues.withUnsafeBufferPointer { hex in
                    var line = 0, at = 0
                    while at < n && line < lines {
                        // The usual line: `0x`, 1-16 hex digits, then the newline or the end.
                        if n - at >= 3 && base[at] == 48 && base[at + 1] | 0x20 == 120 {
                            var j = at + 2, v: UInt64 = 0
                            let last = min(n, j + 16)
                            while j < last {
                                let d = hex[Int(base[j])]
                                if d >= 16 { break }
                                v = v << 4 | UInt64(d)
                                j += 1
                            }
                            if j > at + 2 && (j == n || base[j] == 10) {
                                addresses[line] = v; flags[line] = true
                                line += 1; at = j + 1
                                continue
                            }
                        }
                        let lineEnd = memchr(base + at, 10, n - at).map { UnsafePointer<UInt8>($0.assumingMemoryBound(to: UInt8.self)) - base } ?? n
                        var textEnd = lineEnd
                        if hasNUL, let nul = memchr(base + at, 0, lineEnd - at) {
                            textEnd = UnsafePointer<UInt8>(nul.assumingMemoryBound(to: UInt8.self)) - base
                        }
                        var a = at, b = textEnd
                        while a < b && isSpace(base[a]) { a += 1 }
                        while b > a && isSpace(base[b - 1]) { b -= 1 }
                        let address = a < b ? parseAddress(input, a, b) : nil
                        addresses[line] = address ?? 0; flags[line] = address != nil
                        if a == b { blankLines += 1 }
                        line += 1; at = lineEnd + 1
                    }
                    filledFlags = line
                    filledAddresses = line
                }
            }
        }
        return ParsedLines(lineAddress: lineAddress, isAddress: isAddress, blankLines: blankLines)
    }

    @inline(__always) private static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 13 }

    /// Each byte's value as a hex digit (either case); 255 for a byte that is not one.
    private static let hexDigitValues: [UInt8] = (0...255).map { c in
        switch c {
        case 48...57: return UInt8(c - 48)
        case 97...102: return UInt8(c - 87)
        case 65...70: return UInt8(c - 55)
        default: return 255
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

    private func run(_ parsed: ParsedLines, order: AddressOrder? = nil, write: @escaping (UnsafeRawBufferPointer) -> Void) -> Summary {
        var summary = Summary()
        // Phase 1 (done by `lines(of:)`): split lines and read addresses.
        let lineAddress = parsed.lineAddress, isAddress = parsed.isAddress
        // Phase 2: look up in address order, each distinct address once.
        let order = order ?? AddressOrder(lineAddress, isAddress)
        // A partial index (lazy cold path) grows when an address needs a unit it lacks. It grows
        // for every address first, so one index answers all lookups and the printing below (the
        // string references of frames belong to the index that produced them).
        // (A full index needs no check per address: each took the module's lock and a reference.)
        if let module {
            for k in 0..<order.count {
                guard module.isPartial else { break }
                _ = module.index(for: order[k].address)
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
            printing.first = printer.print(0..<lines, isAddress, found, into: &output)
            output.flush()
        }
        for s in [printing.first, printing.second] {
            summary.add(s)
        }
        summary.invalidLines -= parsed.blankLines  // printed as the others, but not unreadable
        return summary
    }

    /// Frames of every address line (`FoundFrames`). Large inputs are looked up on two threads,
    /// each taking one half of the address order (on one thread the lookups are a visible part
    /// of a large cold run).
    static func lookUp(_ order: AddressOrder, lines: Int, in index: DWARFIndex?) -> FoundFrames {
        let found = FoundFrames(lines: lines)
        guard let index else { return found }
        let parts = order.count >= LLVMStyleSymbolizer.twoThreadLines && sysconf(Int32(_SC_NPROCESSORS_ONLN)) >= 2 ? 2 : 1
        // Each half writes its own frames and the slices of its own lines only.
        // The loop touches no reference count: with a retain of the index (or of `found`, or of
        // the order array) per lookup, the two threads fought over the same counters' cache line
        // (docs/SYMBOLICATION.md, "Round 7"). `found` and `order` outlive the
        // threads; the unowned(unsafe) index is kept alive by `withExtendedLifetime`.
        struct Shared: @unchecked Sendable {
            unowned(unsafe) let index: DWARFIndex
            let order: AddressOrder.View
            let slices: UnsafeMutableBufferPointer<(start: Int32, count: Int32)>
        }
        withExtendedLifetime(index) {
            order.withView { order in
                let shared = Shared(index: index, order: order, slices: found.slices)
                LLVMStyleSymbolizer.perform(parts) { part in
                    let index = shared.index, order = shared.order, slices = shared.slices
                    var all: [IndexedFrame] = []
                    let mine = (order.count * part / parts)..<(order.count * (part + 1) / parts)
                    // Room for a few frames per address at once: grown by doubling, the array was
                    // copied again and again, each larger copy's pages faulted in anew. Room not
                    // used is never touched (a large allocation is mapped, not written).
                    all.reserveCapacity(mine.count * 4)
                    var previous: (address: UInt64, start: Int32, count: Int32)? = nil
                    var hints = DWARFIndex.SearchHints()
                    for k in mine {
                        let (address, line) = order[k]
                        if let p = previous, p.address == address { slices[Int(line)] = (p.start, p.count); continue }
                        let start = Int32(all.count)
                        let entry = (start, Int32(index.appendFrames(of: address, to: &all, hints: &hints)))
                        slices[Int(line)] = entry
                        previous = (address, entry.0, entry.1)
                    }
                    if part == 0 { found.first = all } else { found.second = all }
                }
                if parts == 2 {  // the second half's slices start after the first half's frames
                    let base = Int32(found.first.count)
                    for k in (order.count / 2)..<order.count { found.slices[Int(order[k].line)].start += base }
                }
            }
        }
        return found
    }

    /// `body(0)` here, or `body(0)` here and `body(1)` on a thread of its own at once (both done
    /// on return). A thread made for the purpose, not libdispatch's pool: starting the pool
    /// reads the CPU topology from /sys and makes its worker threads, in the middle of a run.
    static func perform(_ parts: Int, _ body: @escaping @Sendable (Int) -> Void) {
        if parts == 2 {
            let done = DispatchSemaphore(value: 0)
            if DetachedThread.start({
                body(1)
                done.signal()
            }) {
                body(0)
                done.wait()
                return
            }
        }
        for part in 0..<parts { body(part) }
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
