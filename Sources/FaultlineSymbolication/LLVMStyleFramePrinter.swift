// Address mode's text for a run of input lines: `llvm-symbolizer --inlines` records, byte for byte.
#if canImport(Glibc)
    import Glibc
#endif

/// Formats the looked-up frames of some input lines. One per thread: it keeps its own caches.
struct LLVMStyleFramePrinter {
    /// Kept alive by the caller for as long as the printer is used; unowned(unsafe) so printing
    /// on two threads does not make them fight over its reference count.
    private unowned(unsafe) let index: DWARFIndex?
    private let demangle: Bool
    private let demangleSwift: Bool
    private let functionNames: FunctionNameKind
    /// Demangled names by string reference (only names in a known mangling go through the demangler).
    private var names: [UInt32: [UInt8]] = [:]
    /// Length of each file's path by file number, -1 until measured: a path is printed for
    /// nearly every frame, and a strlen each time showed in warm runs (docs/SYMBOLICATION.md).
    private var pathLengths: [Int32]

    init(index: DWARFIndex?, demangle: Bool, demangleSwift: Bool, functionNames: FunctionNameKind = .linkage) {
        self.index = index
        self.demangle = demangle
        self.demangleSwift = demangleSwift
        self.functionNames = functionNames
        unknownRecord = functionNames == .none ? Array("??:0:0\n\n".utf8) : Array("??\n??:0:0\n\n".utf8)
        pathLengths = Array(repeating: -1, count: index?.files.count ?? 0)
    }

    private let unknownRecord: [UInt8]
    /// Lines whose frames `print` copies into input order at a time (a printing chunk's worth).
    private static let linesPerBlock = 4096
    /// The frames of the lines being printed, in input order (reused from block to block).
    private var inOrder: [IndexedFrame] = []

    /// Prints the records of `lines` (input line numbers): each address line's frames
    /// (`found`), an unknown record for a line that is not an address or
    /// has no frames, as llvm-symbolizer does.
    mutating func print(
        _ lines: Range<Int>, _ isAddress: [Bool], _ found: LLVMStyleSymbolizer.FoundFrames, into output: inout OutputBuffer
    ) -> LLVMStyleSymbolizer.Summary {
        var summary = LLVMStyleSymbolizer.Summary()
        // Unwrapped once for the whole run of lines: unwrapped per line, it cost a retain and a
        // release of the index for every address.
        guard let index else {
            for i in lines {
                if isAddress[i] { summary.addresses += 1; summary.unresolved += 1 } else { summary.invalidLines += 1 }
                unknownRecord.withUnsafeBytes { output.append($0) }
            }
            return summary
        }
        // The frames were found in address order and are printed in input order, so nearly every
        // line's first frame is a cache miss. Copied into input order first, in a loop that does
        // nothing else, the misses overlap; formatting a line between two of them, they did not.
        // A block of lines at a time, so the copy stays small however many lines one call prints.
        let slices = found.slices
        var blockStart = lines.lowerBound
        while blockStart < lines.upperBound {
            let block = blockStart..<min(lines.upperBound, blockStart + LLVMStyleFramePrinter.linesPerBlock)
            gather(block, isAddress, found)
            let ordered = inOrder
            var next = 0  // the first of the current line's frames in `ordered`
            for i in block {
                guard isAddress[i] else {
                    // llvm-symbolizer prints an unknown record for a line it cannot read.
                    unknownRecord.withUnsafeBytes { output.append($0) }
                    summary.invalidLines += 1
                    continue
                }
                summary.addresses += 1
                let count = Int(slices[i].count)
                guard count > 0 else {
                    summary.unresolved += 1
                    unknownRecord.withUnsafeBytes { output.append($0) }
                    continue
                }
                for j in next..<next + count {
                    var f = ordered[j]
                    if functionNames == .none {
                        // llvm reads no symbol table then: a frame only the ELF symbols know has no file.
                        if f.nameFromSymbolTable { f.file = IndexTables.none }
                    } else {
                        appendName(f.name, index, &output)
                        output.append(10)
                    }
                    appendLocation(f, index, &output)
                    output.append(10)
                }
                output.append(10)
                next += count
            }
            blockStart = block.upperBound
        }
        return summary
    }

    /// Copies the frames of `block`'s address lines into `inOrder`, in input order. Through
    /// buffer pointers, with nothing else in the loop: the processor then has many of the loads
    /// (each a cache miss: the frames lie in address order) in flight at once.
    private mutating func gather(_ block: Range<Int>, _ isAddress: [Bool], _ found: LLVMStyleSymbolizer.FoundFrames) {
        let slices = UnsafeBufferPointer(found.slices)
        var total = 0
        for i in block where isAddress[i] { total += Int(slices[i].count) }
        if inOrder.count < total {
            let unused = IndexedFrame(name: 0, file: 0, line: 0, column: 0, isInlined: false, nameFromSymbolTable: false)
            inOrder += repeatElement(unused, count: total - inOrder.count)
        }
        found.first.withUnsafeBufferPointer { first in
            found.second.withUnsafeBufferPointer { second in
                isAddress.withUnsafeBufferPointer { isAddress in
                    inOrder.withUnsafeMutableBufferPointer { out in
                        guard var to = out.baseAddress, let firstBase = first.baseAddress ?? second.baseAddress else { return }
                        let secondBase = second.baseAddress ?? firstBase, firstCount = first.count
                        for i in block where isAddress[i] {
                            let (start, count) = slices[i]
                            var k = Int(start)
                            let end = k + Int(count)
                            while k < end {
                                to.initialize(to: k < firstCount ? firstBase[k] : secondBase[k - firstCount])
                                to += 1; k += 1
                            }
                        }
                    }
                }
            }
        }
    }

    private mutating func appendName(_ ref: UInt32, _ index: DWARFIndex, _ out: inout OutputBuffer) {
        guard ref != IndexTables.none, let raw = index.cString(ref), raw.count > 0 else {
            out.append(63); out.append(63); return
        }
        // Only names in a known mangling need the demangler; C names are copied as they are.
        if demangle && Demangler.mayBeMangled(raw[0], raw.count > 1 ? raw[1] : 0) {
            if let cached = names[ref] { cached.withUnsafeBytes { out.append($0) }; return }
            let s = String(decoding: raw, as: UTF8.self)
            let skip = !demangleSwift && Demangler.isSwift(s)
            let bytes = Array((skip ? s : Demangler.demangle(s, cxx: .llvm) ?? s).utf8)
            names[ref] = bytes
            bytes.withUnsafeBytes { out.append($0) }
            return
        }
        out.append(UnsafeRawBufferPointer(raw))
    }

    private mutating func appendLocation(_ f: IndexedFrame, _ index: DWARFIndex, _ out: inout OutputBuffer) {
        guard let path = self.path(f.file, index) else {
            out.append(63); out.append(63); out.append(58); out.append(48); out.append(58); out.append(48)  // ??:0:0
            return
        }
        out.append(UnsafeRawBufferPointer(path))
        out.append(58)
        appendDecimal(f.line, &out)
        out.append(58)
        appendDecimal(f.column, &out)
    }

    /// A file's path (`index.cString(index.fileString(file))`), measured once per file.
    @inline(__always) private mutating func path(_ file: UInt32, _ index: DWARFIndex) -> UnsafeBufferPointer<UInt8>? {
        guard Int(file) < pathLengths.count else { return index.cString(index.fileString(file)) }
        let known = pathLengths[Int(file)]
        if known >= 0 { return UnsafeBufferPointer(start: index.strings.baseAddress! + Int(index.files[Int(file)]), count: Int(known)) }
        guard let path = index.cString(index.fileString(file)) else { return nil }
        if path.count < Int(Int32.max) { pathLengths[Int(file)] = Int32(path.count) }
        return path
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
