// Symbolication over libdw: the entry point the CLI and the server call.
//
// Public API (the contract the server and CLI code against):
//   Symbolicator(locator:indexCacheDirectory:persistIndexes:)   — `persistIndexes` (default true)
//       is the one addition to the agreed signature: `--no-cache` needs a way to skip the cache.
//   symbolicate(buildID:modulePath:relativeAddress:isReturnAddress:architecture:) -> SymbolicationOutcome
//       (`architecture` joined the agreed signature with aarch64: it says how far back a call lies)
//   symbolicate(objectFile:address:) for ELF virtual addresses (address mode).
//   invalidate(buildID:), removePersistedIndex(buildID:)
// SymbolicatedFrame gained `fromSymbolTable` (the ELF-symbol fallback says so) and
// `shortFunction`; both have defaults so the agreed initialiser still works.
//
// Flow: module key (build-id, else path) → cached module state → else locate the debug file,
// load its persisted index or build one with libdw (DWARFIndexBuilder) and persist it → binary
// search (DWARFIndex.lookup) → names demangled once per module and cached.
import FoundationEssentials
import Glibc
import FaultlineProtocol
import Synchronization

/// Resolves module-relative addresses to frames. Thread-safe: the server calls it from many
/// threads; each module is located and indexed once (other threads asking for the same module
/// wait for it), and lookups on a loaded module take no lock except the name cache's.
public final class Symbolicator: @unchecked Sendable {
    public let locator: DebugFileLocator
    let cache: IndexCache?
    /// Cold start from the units covering the first addresses (LazyIndex.swift); off: always
    /// build the whole index before answering (the behaviour before the lazy path).
    public var lazyColdPath = true
    /// Up to this many addresses known up front count as "a few lookups" (`IndexCache.load`): a
    /// crash report's frames, an address or two — not a batch.
    static let fewLookups = 256
    /// A partial index starts the full build on a background thread (long-lived processes: the
    /// server). Off (the CLI): the full index is built by the first run that needs most units.
    public var buildFullIndexInBackground = false
    /// Build full indexes on two threads (DWARFIndexParallel.swift). Off by default (the server
    /// keeps its cores for ingest); `faultline symbolicate` turns it on. It trades a little CPU
    /// and memory for wall time, and gains nothing when other work holds the second core.
    public var parallelFullBuild = false
    /// Whether a split-DWARF skeleton's unit is read from the `.dwo` file its DWARF names (an
    /// absolute path, or one under its compilation directory): what a developer's own files want.
    /// Off for debug files someone else supplied (the server's uploads), whose DWARF would
    /// otherwise choose which files of this machine are opened: their skeleton units answer from
    /// their own line table (file and line; functions from ELF symbols) and are reported missing.
    public var opensSplitUnits = true

    private enum ModuleState { case loaded(LoadedModule), unresolved(UnresolvedReason) }
    /// One module's state, held while it is located and indexed so other threads asking for it wait.
    private final class Slot: Sendable { let state = Mutex<ModuleState?>(nil) }
    private let slots = Mutex<[String: Slot]>([:])

    /// - Parameters:
    ///   - indexCacheDirectory: where persisted indexes live; nil means `$XDG_CACHE_HOME/faultline`
    ///     (else `~/.cache/faultline`). The server passes its debug-file store.
    ///   - persistIndexes: false never reads or writes index files (`--no-cache`).
    public init(locator: DebugFileLocator, indexCacheDirectory: String?, persistIndexes: Bool = true) {
        self.locator = locator
        let cacheDirectory = indexCacheDirectory ?? IndexCache.defaultDirectory
        // The shared-/tmp fallback (no HOME, no XDG_CACHE_HOME) is only used if it is ours alone.
        let trusted = indexCacheDirectory != nil || !cacheDirectory.hasPrefix("/tmp/") || IndexCache.isSafeDirectory(cacheDirectory)
        self.cache = persistIndexes && trusted ? IndexCache(directory: cacheDirectory) : nil
    }

    /// Symbolicates one address of a module.
    /// - Parameters:
    ///   - relativeAddress: runtime address − module base (Sentry's `instruction_addr - image_addr`);
    ///     the ELF's first load address is added here.
    ///   - isReturnAddress: look up the call before it (`architecture.callSite(ofReturnAddress:)`).
    ///   - architecture: the crashed process's (the event's or report's), which says how far
    ///     back the call lies: 1 byte on x86_64, 4 on aarch64.
    public func symbolicate(
        buildID: BuildID?, modulePath: String?, relativeAddress: UInt64, isReturnAddress: Bool, architecture: CPUArchitecture
    ) -> SymbolicationOutcome {
        guard buildID != nil || (modulePath.map { !$0.isEmpty } ?? false) else { return .unresolved(.notInAnyModule) }
        func lookup(_ elfAddress: UInt64) -> UInt64 { isReturnAddress ? architecture.callSite(ofReturnAddress: elfAddress) : elfAddress }
        switch module(buildID: buildID, modulePath: modulePath, upcoming: UpcomingLookups(count: 1) { [lookup(relativeAddress &+ $0)] }) {
        case .unresolved(let r): return .unresolved(r)
        case .loaded(let m): return m.frames(at: lookup(relativeAddress &+ m.firstLoadAddress), inferLineZero: true)
        }
    }

    /// Symbolicates an ELF virtual address of `objectFile` (what llvm-symbolizer's `--obj` takes).
    /// Throws when the object itself is not a readable ELF file.
    public func symbolicate(objectFile: String, address: UInt64) throws(ELFError) -> SymbolicationOutcome {
        let m = try module(objectFile: objectFile, upcoming: UpcomingLookups(count: 1) { _ in [address] })
        switch m {
        case .unresolved(let r): return .unresolved(r)
        case .loaded(let lm): return lm.frames(at: address)
        }
    }

    /// Forgets what is known about `buildID` (a new debug file arrived): the next lookup locates
    /// and indexes again. A persisted index built from symbols only is rebuilt when DWARF appears.
    public func invalidate(buildID: BuildID) {
        slots.withLock { $0[buildID.hex] = nil }
        // A new file for this build-id may carry a better symbol table than the one a symbols-only
        // index was built from (.symtab after .dynsym); an index with DWARF stays authoritative.
        if let cache, let index = cache.load(buildID), !index.hasDWARF { cache.remove(buildID) }
    }

    /// Deletes the persisted index of `buildID`, if any, and forgets the module: the next lookup
    /// builds the index again from the debug file (`--rebuild-index`, benchmarks).
    public func removePersistedIndex(buildID: BuildID) {
        cache?.remove(buildID)
        invalidate(buildID: buildID)
    }

    // MARK: Modules

    /// Address mode: the object's own build-id keys the module; the object is the module path.
    private func module(objectFile: String, upcoming: UpcomingLookups? = nil) throws(ELFError) -> ModuleState {
        let opened = OpenELFFiles()
        let info = try opened.info(objectFile)
        if info.kind == .relocatable { throw .relocatable(objectFile) }
        return module(buildID: info.buildID, modulePath: objectFile, upcoming: upcoming, opened: opened)
    }

    /// The lookups about to be made in a module: at most `count` of them, at `addresses(first
    /// load address)` (ELF virtual addresses). Only a cold start asks for the addresses, and may
    /// wait for them: address mode reads its input on another thread while a warm start loads.
    struct UpcomingLookups {
        let count: Int
        let addresses: (UInt64) -> [UInt64]
    }

    /// The module of `objectFile`; `addresses` (ELF virtual addresses), when given, are the ones
    /// about to be looked up: a cold start then parses only the units covering them.
    func loadedModule(objectFile: String, addresses: [UInt64]? = nil) throws(ELFError) -> LoadedModule? {
        try? loadModule(objectFile: objectFile, upcoming: addresses.map { a in UpcomingLookups(count: a.count) { _ in a } }).get()
    }

    /// The module of `objectFile`, or why there is none.
    func loadModule(objectFile: String, upcoming: UpcomingLookups? = nil) throws(ELFError) -> Result<LoadedModule, UnresolvedReasonError> {
        switch try module(objectFile: objectFile, upcoming: upcoming) {
        case .loaded(let m): return .success(m)
        case .unresolved(let r): return .failure(UnresolvedReasonError(reason: r))
        }
    }

    /// The notes of every module loaded so far (report mode prints them once after a report),
    /// each prefixed with the module's debug file.
    public func notesForLoadedModules() -> [String] {
        let all = slots.withLock { Array($0.values) }
        var out: [String] = []
        for slot in all {
            guard case .loaded(let m)? = slot.state.withLock({ $0 }) else { continue }
            out += m.notes.map { (m.debugPath.map { $0 + ": " } ?? "") + $0 }
        }
        return out.sorted()
    }

    /// What a user should know about a module's debug information (see `LoadedModule.notes`):
    /// a dwz supplementary file or split-DWARF units that were not found. Loads the module.
    public func notes(buildID: BuildID?, modulePath: String?) -> [String] {
        if case .loaded(let m) = module(buildID: buildID, modulePath: modulePath) { return m.notes }
        return []
    }

    /// The module of `buildID` (or of `modulePath` when there is none), loaded once.
    /// - Parameter upcoming: the lookups about to be made (`UpcomingLookups`).
    /// - Parameter opened: files the caller already has open (address mode: the object itself).
    private func module(
        buildID: BuildID?, modulePath: String?, upcoming: UpcomingLookups? = nil, opened: OpenELFFiles = OpenELFFiles()
    ) -> ModuleState {
        let key = buildID?.hex ?? "path:" + (modulePath ?? "")
        let slot = slots.withLock { slots in
            if let s = slots[key] { return s }
            let s = Slot()
            slots[key] = s
            return s
        }
        return slot.state.withLock { state in
            if let s = state { return s }
            let s = load(buildID: buildID, modulePath: modulePath, upcoming: upcoming, opened: opened)
            state = s
            return s
        }
    }

    private func load(buildID: BuildID?, modulePath: String?, upcoming: UpcomingLookups?, opened: OpenELFFiles) -> ModuleState {
        // A persisted index with DWARF is authoritative for its build-id: no file search needed.
        let fewLookups = (upcoming?.count ?? Int.max) <= Symbolicator.fewLookups
        if let buildID, let cache, let index = cache.load(buildID, fewLookups: fewLookups), index.hasDWARF {
            return .loaded(LoadedModule(index: index))
        }
        let loc = locator.locate(buildID: buildID, modulePath: modulePath, opened: opened)
        var notes: [String] = []
        if loc.debugFile == nil, let (file, link) = loc.missingSupplementary {
            notes.append(
                "debug file \(file) was made by dwz, and its supplementary file was not found (\(link.description); looked beside it, in the debug directories, /usr/lib/debug/.build-id and debuginfod); its DWARF is not used, ELF symbols only. Install or pass (--debug-file) the supplementary file."
            )
        }
        guard let source = loc.debugFile ?? loc.symbolsOnlyFile else {
            if let buildID, let cache, let index = cache.load(buildID) { return .loaded(LoadedModule(index: index)) }
            if loc.missingSupplementary != nil { return .unresolved(.missingSupplementaryFile) }
            return .unresolved(loc.mismatched.isEmpty ? .missingDebugFile : .buildIDMismatch)
        }
        if loc.debugFile == nil, let buildID, let cache, let index = cache.load(buildID) {
            return .loaded(LoadedModule(index: index, notes: notes))  // symbols-only index, still current
        }
        guard let debug = try? opened.handle(source) else { return .unresolved(.unreadableDebugFile) }
        var sources = [debug]
        var module: ELFHandle? = nil
        if let m = loc.moduleFile, m != source, let h = try? opened.handle(m) { sources.append(h); module = h }
        // The module's own program headers are authoritative; a split debug file keeps copies.
        let firstLoad = (module ?? debug).firstLoadAddress
        var scanned: UnitTable? = nil  // the lazy path's scan, reused by a full build
        if lazyColdPath, let upcoming, loc.debugFile != nil,
            let lazy = lazyModule(
                sources, source, loc.moduleFile, buildID, firstLoad, upcoming.addresses(firstLoad),
                supplementary: loc.supplementaryFile, scanned: &scanned)
        {
            return .loaded(lazy)
        }
        var tables = DWARFIndexBuilder.build(
            debugFile: debug, symbolSources: sources, path: parallelFullBuild ? source : nil,
            supplementary: loc.supplementaryFile, symbolsOnly: loc.debugFile == nil,
            unitTable: scanned, opensSplitUnits: opensSplitUnits)
        tables.firstLoadAddress = firstLoad
        guard let index = DWARFIndex.inMemory(consume tables, buildID: buildID) else { return .unresolved(.unreadableDebugFile) }
        persist(index, buildID)
        return .loaded(LoadedModule(index: index, notes: notes, debugPath: source))
    }

    /// Stores a full index unless it lacks units (split DWARF whose .dwo files were missing: a
    /// later run that finds them must not be answered from the incomplete one).
    fileprivate func persist(_ index: DWARFIndex, _ buildID: BuildID?) {
        if let buildID, let cache, index.missingSplitUnits.isEmpty { cache.store(index, for: buildID) }
    }
}

extension Symbolicator {
    /// A module over a partial index of the units covering `addresses`, or nil when they are
    /// most of the file (the caller then builds, and persists, the full index).
    /// - Parameter files: the open debug file, then the module file when it is another.
    fileprivate func lazyModule(
        _ files: [ELFHandle], _ debugPath: String, _ modulePath: String?, _ buildID: BuildID?,
        _ firstLoad: UInt64, _ addresses: [UInt64], supplementary: String?,
        scanned: inout UnitTable?
    ) -> LoadedModule? {
        guard let units = UnitTable.scan(files[0]) else { return nil }
        scanned = units
        guard let need = units.units(for: addresses, stopAbove: LazyModuleSource.fullIndexBytes(of: units)) else { return nil }
        let source = LazyModuleSource(
            units: units, debugPath: debugPath, modulePath: modulePath, buildID: buildID,
            firstLoadAddress: firstLoad, parsed: need)
        source.parallel = parallelFullBuild
        source.opensSplitUnits = opensSplitUnits
        source.supplementaryPath = supplementary
        guard !source.wantsFullIndex(need),
            let partial = source.build(units: need, allSymbols: addresses.contains { !units.covers($0) }, openFiles: files)
        else { return nil }
        let persist: @Sendable (DWARFIndex) -> Void = { [self] index in self.persist(index, buildID) }
        let module = LoadedModule(index: partial, lazy: source, onFullIndex: persist, debugPath: debugPath)
        if buildFullIndexInBackground {
            DetachedThread.start { [weak module] in
                guard module != nil, let full = source.build(units: nil) else { return }
                module?.installFullIndex(full)
            }
        }
        return module
    }
}
