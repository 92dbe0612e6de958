// A module the symbolicator has an index for, and the frames it answers for an address.
import FoundationEssentials
import Glibc
import FaultlineProtocol
import Synchronization

/// A module whose index is loaded. Its index is replaced only when it is partial (the lazy cold
/// path, LazyIndex.swift) and an address needs a unit it lacks, or the full index arrives.
final class LoadedModule: Sendable {
    private struct IndexState {
        var current: DWARFIndex
        /// Non-nil while the index is partial.
        var lazy: LazyModuleSource?
    }
    private let indexState: Mutex<IndexState>
    let firstLoadAddress: UInt64
    private let names = Mutex<[UInt32: (display: String?, raw: String?)]>([:])
    /// Called with the full index when this module builds it (the symbolicator persists it).
    private let onFullIndex: (@Sendable (DWARFIndex) -> Void)?
    /// Why some of the module's debug information is not used (a missing supplementary file).
    private let loadNotes: [String]
    /// The debug file's path, for the split-DWARF note (`.dwp` beside it).
    let debugPath: String?

    init(
        index: DWARFIndex, lazy: LazyModuleSource? = nil, onFullIndex: (@Sendable (DWARFIndex) -> Void)? = nil,
        notes: [String] = [], debugPath: String? = nil
    ) {
        self.indexState = Mutex(IndexState(current: index, lazy: lazy))
        self.firstLoadAddress = index.firstLoadAddress
        self.onFullIndex = onFullIndex
        self.loadNotes = notes
        self.debugPath = debugPath
    }

    /// What a user should know about this module's answers: debug information that exists but
    /// is not used (a dwz supplementary file not found; split-DWARF units whose .dwo is missing,
    /// or that live in a .dwp package libdw 0.188 cannot read). Empty when everything was read.
    var notes: [String] {
        var out = loadNotes
        let missing = index.missingSplitUnits
        if !missing.isEmpty {
            let shown = missing.prefix(5).joined(separator: ", ") + (missing.count > 5 ? ", …" : "")
            var text =
                "\(missing.count) split-DWARF unit(s) not found (\(shown)): addresses in them get file and line from the skeleton's line table and functions from ELF symbols"
            // Where llvm-symbolizer and gdb look: `<binary>.dwp` (also for a `<binary>.debug` file).
            let packages = [debugPath, debugPath.flatMap { $0.hasSuffix(".debug") ? String($0.dropLast(6)) : nil }]
                .compactMap { $0 }.map { $0 + ".dwp" }.filter(DebugFileLocator.isRegularFile)
            if let dwp = packages.first {
                text +=
                    "; \(dwp) is a DWARF package, which this libdw (elfutils 0.188) cannot read (elfutils 0.191 can): keep the .dwo files beside the binary or in the build directory"
            } else {
                text += "; the .dwo files are looked for beside the binary and under the unit's compilation directory"
            }
            out.append(text)
        }
        return out
    }

    /// The index as it is now (address mode reads it once per run).
    var index: DWARFIndex { indexState.withLock { $0.current } }
    /// Whether the index covers only some units (tests, diagnostics).
    var isPartial: Bool { indexState.withLock { $0.lazy != nil } }

    /// An index that answers `address` exactly as the full one would: a partial index grows by
    /// the units covering it (or becomes the full one when that is most of the file).
    func index(for address: UInt64) -> DWARFIndex {
        indexState.withLock { s in
            guard let lazy = s.lazy else { return s.current }
            var need = Set<Int>()
            lazy.units.units(covering: address, into: &need)
            // No unit covers it: only ELF symbols name it, and the partial index may hold few.
            let needsAllSymbols = need.isEmpty && !lazy.hasAllSymbols
            if need.isSubset(of: lazy.parsed) && !needsAllSymbols { return s.current }
            let all = lazy.parsed.union(need)
            let full = lazy.wantsFullIndex(all)
            guard let next = lazy.build(units: full ? nil : all, allSymbols: needsAllSymbols || lazy.hasAllSymbols) else { return s.current }
            replace(&s, with: next, full: full, parsed: all)
            return s.current
        }
    }

    /// Installs the full index built elsewhere (the background build); ignored once full.
    func installFullIndex(_ full: DWARFIndex) {
        indexState.withLock { s in if s.lazy != nil { replace(&s, with: full, full: true, parsed: []) } }
    }

    /// Runs inside `indexState`'s lock, on its state.
    private func replace(_ s: inout IndexState, with next: DWARFIndex, full: Bool, parsed: Set<Int>) {
        names.withLock { $0 = [:] }  // string references belong to the old index
        s.current = next
        if full { s.lazy = nil; onFullIndex?(next) } else { s.lazy?.parsed = parsed }
    }

    /// Display (demangled) and raw names for a string reference of `index`, demangled once.
    func name(_ ref: UInt32, in index: DWARFIndex) -> (display: String?, raw: String?) {
        if ref == IndexTables.none { return (nil, nil) }
        let cacheable = index === self.index
        if cacheable, let n = names.withLock({ $0[ref] }) { return n }
        let raw = index.string(ref)
        let display = raw.flatMap { Demangler.demangle($0) } ?? raw
        let entry = (display, display == raw ? nil : raw)
        if cacheable { names.withLock { $0[ref] = entry } }
        return entry
    }

    func frames(at address: UInt64, inferLineZero: Bool = false) -> SymbolicationOutcome {
        var raw: [IndexedFrame] = []
        let index = index(for: address)
        index.lookup(address, into: &raw)
        guard !raw.isEmpty else { return .unresolved(.noDebugInfoForAddress) }
        var inferred = false
        if inferLineZero, !raw[0].nameFromSymbolTable, raw[0].line == 0 {
            if let loc = index.inferredLocation(address) {
                raw[0].file = loc.file; raw[0].line = loc.line; raw[0].column = loc.column; inferred = true
            } else if name(raw[0].name, in: index).display?.hasPrefix("Swift runtime failure") == true,
                let k = raw.indices.dropFirst().first(where: { raw[$0].line != 0 && !raw[$0].nameFromSymbolTable })
            {
                // The trap's artificial inlined frame (and the standard library's inlined checks
                // between it and the user's code) have no line: the user's line is the first
                // meaningful call site outward.
                raw[0].file = raw[k].file; raw[0].line = raw[k].line; raw[0].column = raw[k].column; inferred = true
            }
        }
        return .resolved(
            raw.enumerated().map { (k, f) in
                let n = name(f.name, in: index)
                // A symbol-table frame's STT_FILE name ("Swift.o") is an object file, not a source:
                // address mode prints it like llvm-symbolizer, events and backtraces leave it out.
                let file = f.nameFromSymbolTable ? nil : index.string(index.fileString(f.file))
                var frame = SymbolicatedFrame(
                    function: n.display, mangledFunction: n.raw, file: file,
                    line: file == nil ? nil : Int(f.line), column: file == nil ? nil : Int(f.column),
                    isInlined: f.isInlined, fromSymbolTable: f.nameFromSymbolTable)
                frame.isInferred = inferred && k == 0
                return frame
            })
    }
}
