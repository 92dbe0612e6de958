// A full index built on two threads: each parses every other unit (in file order) with its own
// libdw sessions over the one mapped Elf, then the second thread's tables are appended to the
// first's. The second thread also reads the ELF symbols.
//
// libdw 0.188 is not thread-safe per Dwarf handle (abbreviations, line tables and split units are
// loaded lazily into it), so each thread has its own (`dwarf_begin_elf` per session). libelf
// (built without thread safety on Debian) caches section headers and section data in the Elf on
// first use: one `dwarf_begin_elf` on this thread before the second starts loads everything libdw
// asks libelf for, and afterwards both threads only read those caches and the mapping. One Elf,
// not two: the file's pages are mapped, and counted in peak RSS, once; each thread releases only
// its own units' pages (`UnitPageReleaser`). The merge re-interns the second builder's strings
// and renumbers its files, scopes, rows and symbols; flattening then runs once on the merged
// tables, so the result answers every lookup as a single-threaded build does (its string blob may
// be ordered differently). The assignment of units is fixed, so it is the same from run to run.
import CDw
import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension DWARFIndexBuilder {
    /// Files smaller than this are built on one thread: a thread and a second open cost more.
    static let parallelThresholdBytes: UInt64 = 1 << 20

    /// Nil when one thread is the better choice (one CPU, a small file, an unreadable second handle).
    static func buildInParallel(debugFile: ELFHandle, symbolSources: [ELFHandle],
                                minimumBytes: UInt64 = parallelThresholdBytes, supplementary: String? = nil) -> IndexTables? {
        guard ProcessInfo.processInfo.activeProcessorCount >= 2,
              let units = UnitTable.scan(debugFile.elf), units.offsets.count >= 2,
              units.totalBytes >= minimumBytes else { return nil }
        // Split in file order where half of the bytes lie before.
        // Units alternate between the threads in file order. Halves by bytes were 2:1 in time on the
        // Python library (the cost per byte differs between its early and late units); alternating
        // averages that out, and a fixed assignment keeps the result the same from run to run.
        let first = units.offsets.enumerated().filter { $0.offset % 2 == 0 }.map(\.element)
        let second = units.offsets.enumerated().filter { $0.offset % 2 == 1 }.map(\.element)
        // Section headers, names and data (decompressed when compressed) cached in the Elf here.
        guard let warm = dwarf_begin_elf(debugFile.elf, DWARF_C_READ, nil) else { return nil }
        dwarf_end(warm)
        // Likewise the symbol and string tables the second thread reads (libelf loads a section's
        // data into the Elf on its first elf_getdata).
        for source in symbolSources {
            for section in source.sections() where section.header.sh_type == UInt32(SHT_SYMTAB) || section.header.sh_type == UInt32(SHT_DYNSYM) {
                _ = elf_getdata(section.scn, nil)
                if let strings = elf_getscn(source.elf, Int(section.header.sh_link)) { _ = elf_getdata(strings, nil) }
            }
        }

        final class Box: @unchecked Sendable {
            var builder = DWARFIndexBuilder(); var any = false
            let handle: ELFHandle
            var symbolSources: [ELFHandle] = []
            init(_ h: ELFHandle) { handle = h }
        }
        let other = Box(debugFile)
        let done = DispatchSemaphore(value: 0)
        // The ELF symbols are read on the second thread too, after its units: they need only
        // libelf's caches, warmed above, and take the serial tail off the critical path.
        other.symbolSources = symbolSources
        Thread.detachNewThread {
            other.any = other.builder.walkUnits(other.handle.elf, only: second, supplementary: SupplementaryDwarf.opening(supplementary), releasePages: true)
            other.builder.readSymbols(other.symbolSources, deduplicate: true)
            done.signal()
        }
        var b = DWARFIndexBuilder()
        let any = b.walkUnits(debugFile.elf, only: first, supplementary: SupplementaryDwarf.opening(supplementary), releasePages: true)
        done.wait()
        b.merge(other.builder)
        let otherMissing = other.builder.missingSplitUnits
        other.builder = DWARFIndexBuilder()   // its tables are copied: free them before flattening (peak RSS)
        b.t.hasDWARF = any || other.any
        b.flattenScopes()
        b.t.strings = b.pool.bytes
        b.t.missingSplitUnits = b.missingSplitUnits + otherMissing
        return b.t
    }

    /// Appends `o`'s units (walked, not yet flattened) and ELF symbols to this builder's.
    mutating func merge(_ o: DWARFIndexBuilder) {
        // Strings: every string `o` holds went through its content dictionary.
        var stringMap = [UInt32](repeating: IndexTables.none, count: o.pool.bytes.count)
        // A full build interns every string it stores, so `o`'s blob is exactly its strings one
        // after another: read in order (sequential, not in hash-table order).
        o.pool.bytes.withUnsafeBytes { b in
            var r = 1
            while r < b.count {
                let start = b.baseAddress! + r
                let n = strlen(start.assumingMemoryBound(to: CChar.self))
                stringMap[r] = pool.intern(bytes: UnsafeRawBufferPointer(start: start, count: n))
                r += n + 1
            }
        }
        // Files: by path, shared with ours when equal.
        var fileMap = [UInt32](repeating: IndexTables.none, count: o.t.files.count)
        for (i, sref) in o.t.files.enumerated() {
            let mine = stringMap[Int(sref)]
            if let f = fileIndex[mine] { fileMap[i] = f } else {
                let f = UInt32(t.files.count)
                t.files.append(mine)
                fileIndex[mine] = f
                fileMap[i] = f
            }
        }
        @inline(__always) func file(_ f: UInt32) -> UInt32 { f == IndexTables.none ? f : fileMap[Int(f)] }
        // Rows and units.
        // Exact capacity first: growth by doubling would hold up to twice the rows while copying.
        let rows = t.rowAddress.count + o.t.rowAddress.count
        t.rowAddress.reserveCapacity(rows); t.rowFile.reserveCapacity(rows)
        t.rowLine.reserveCapacity(rows); t.rowColumn.reserveCapacity(rows)
        let rowBase = UInt32(t.rowAddress.count)
        let unitBase = UInt32(t.cuRowStart.count)
        t.rowAddress.append(contentsOf: o.t.rowAddress)
        t.rowFile.append(contentsOf: o.t.rowFile.lazy.map { file($0) })
        t.rowLine.append(contentsOf: o.t.rowLine)
        t.rowColumn.append(contentsOf: o.t.rowColumn)
        t.cuRowStart.append(contentsOf: o.t.cuRowStart.lazy.map { $0 + rowBase })
        t.cuRowEnd.append(contentsOf: o.t.cuRowEnd.lazy.map { $0 + rowBase })
        var cus = zip(zip(t.cuLow, t.cuHigh), t.cuOfRange).map { ($0.0, $0.1, $1) }
        for i in o.t.cuLow.indices { cus.append((o.t.cuLow[i], o.t.cuHigh[i], o.t.cuOfRange[i] + unitBase)) }
        cus.sort { $0.0 < $1.0 }
        t.cuLow = cus.map { $0.0 }; t.cuHigh = cus.map { $0.1 }; t.cuOfRange = cus.map { $0.2 }
        // Scopes and their ranges.
        let scopeBase = UInt32(t.scopeName.count)
        t.scopeName.append(contentsOf: o.t.scopeName.lazy.map { $0 == IndexTables.none ? $0 : stringMap[Int($0)] })
        t.scopeParent.append(contentsOf: o.t.scopeParent.lazy.map { $0 == IndexTables.none ? $0 : $0 + scopeBase })
        t.scopeCallFile.append(contentsOf: o.t.scopeCallFile.lazy.map { file($0) })
        t.scopeCallLine.append(contentsOf: o.t.scopeCallLine)
        t.scopeCallColumn.append(contentsOf: o.t.scopeCallColumn)
        t.scopeFlags.append(contentsOf: o.t.scopeFlags)
        ranges.append(contentsOf: o.ranges.lazy.map { ScopeRange(low: $0.low, high: $0.high, scope: $0.scope + scopeBase, depth: $0.depth) })
        // ELF symbols (only one side reads them).
        t.symbolAddress.append(contentsOf: o.t.symbolAddress)
        t.symbolSize.append(contentsOf: o.t.symbolSize)
        t.symbolName.append(contentsOf: o.t.symbolName.lazy.map { $0 == IndexTables.none ? $0 : stringMap[Int($0)] })
        t.symbolFile.append(contentsOf: o.t.symbolFile.lazy.map { file($0) })
    }
}
