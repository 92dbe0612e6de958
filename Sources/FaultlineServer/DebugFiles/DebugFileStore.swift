// Debug files on disk in the `.build-id/xx/rest.debug` (+ `rest` for executables) layout that
// gdb and debuginfod use. Every path is built from a parsed build-id, never from a client name.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import Synchronization

public final class DebugFileStore: Sendable {
    public let root: String
    let tmp: String
    private let known = Mutex<Set<BuildID>>([])
    /// Held by one install at a time.
    private let installing = Mutex<Void>(())

    /// Whether `root` is a directory several servers share (`--debug-files`): staging files there
    /// may be another node's assembly in progress, and another node may install files at any time.
    let shared: Bool

    /// - Parameter sharedDirectory: a debug-file directory several nodes share (a network
    ///   filesystem mount); nil keeps them in `<data>/debug`. Staging files live inside the same
    ///   directory tree, so the rename that installs a file is atomic on every node's view.
    public init(dataDirectory: String, sharedDirectory: String? = nil) throws {
        if let d = sharedDirectory {
            root = d
            tmp = d + "/.staging"
            shared = true
        } else {
            root = dataDirectory + "/debug"
            tmp = dataDirectory + "/tmp"
            shared = false
        }
        for d in [root + "/.build-id", tmp] {
            try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
        }
    }

    /// Loads the set of build-ids with a debug file (startup).
    public func load(_ records: [DebugFileRecord]) {
        let ids = Set(records.filter { $0.hasDebugInfo || $0.hasSymbols }.map(\.buildID))
        known.withLock { $0 = ids }
    }

    /// On a shared directory a miss looks on disk: a file another node installed (complete, since
    /// installs are renames) is noticed at the next frame that needs it.
    public func hasSymbols(for id: BuildID) -> Bool {
        let hit = known.withLock { $0.contains(id) }
        if hit || !shared { return hit }
        guard access(debugInfoPath(id), R_OK) == 0 else { return false }
        known.withLock { _ = $0.insert(id) }
        return true
    }

    /// The debug files (by build-id) whose DWARF needs the supplementary file `id` (`dwz -m`):
    /// when it arrives after them, their events are symbolicated again. Kept as empty files
    /// `.supplementary/<id>/<dependent>` beside the build-id tree, so every node sharing the
    /// directory sees them and a restart loses none.
    public func dependents(ofSupplementary id: BuildID) -> [BuildID] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "\(root)/.supplementary/\(id.hex)")) ?? []
        return names.compactMap { BuildID(hex: $0) }.sorted { $0.hex < $1.hex }
    }

    private func noteDependent(_ id: BuildID, onSupplementary supplementary: BuildID) {
        let dir = "\(root)/.supplementary/\(supplementary.hex)"
        try? FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let fd = open("\(dir)/\(id.hex)", O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if fd >= 0 { close(fd) }
    }

    public func debugInfoPath(_ id: BuildID) -> String {
        let (dir, file) = id.buildIDPathComponents
        return "\(root)/.build-id/\(dir)/\(file).debug"
    }
    public func executablePath(_ id: BuildID) -> String {
        let (dir, file) = id.buildIDPathComponents
        return "\(root)/.build-id/\(dir)/\(file)"
    }

    /// A fresh temporary path inside the data directory (same filesystem, so rename is atomic).
    public func temporaryPath() -> String { "\(tmp)/upload-\(UUID().uuidString)" }

    /// Removes every staging file (start-up: nothing can be assembling yet). Returns how many.
    @discardableResult
    public func removeStagingFiles() -> Int {
        var names = (try? FileManager.default.contentsOfDirectory(atPath: tmp)) ?? []
        if shared {
            // Another node may be assembling: only leftovers older than a day are ours to remove.
            let cutoff = Date().addingTimeInterval(-86_400)
            names = names.filter {
                ((try? FileManager.default.attributesOfItem(atPath: "\(tmp)/\($0)"))?[.modificationDate] as? Date).map { $0 < cutoff } ?? false
            }
        }
        for n in names { try? FileManager.default.removeItem(atPath: "\(tmp)/\(n)") }
        return names.count
    }

    /// Moves a verified file at `path` into place. A file with DWARF or symbols becomes the
    /// build-id's debuginfo; a file with code becomes its executable (one hard link for both).
    /// A file already in place is replaced only by a richer one (symbols over nothing, DWARF over
    /// symbols): a build-id names one build, so another file claiming it is a copy at best (a
    /// re-upload) and a forgery at worst, and the stored file, its index and what debuginfod
    /// serves must stay one file. Returns whether anything was installed.
    @discardableResult
    public func install(_ path: String, summary: ELFSummary) throws -> Bool {
        // One install at a time: "keep the richer file" is a check and a rename, and two uploads
        // of one build-id (stripped and with DWARF) must not interleave between them.
        try installing.withLock { _ in try installAlone(path, summary: summary) }
    }

    /// How much a debug file holds, for "replaced only by a richer one".
    private static func richness(hasDebugInfo: Bool, hasSymbols: Bool) -> Int { hasDebugInfo ? 2 : hasSymbols ? 1 : 0 }

    private func installAlone(_ path: String, summary: ELFSummary) throws -> Bool {
        let fm = FileManager.default
        let dir = (debugInfoPath(summary.buildID) as NSString).deletingLastPathComponent
        try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
        var targets: [String] = []
        if summary.hasDebugInfo || summary.hasSymbols { targets.append(debugInfoPath(summary.buildID)) }
        if summary.isExecutable { targets.append(executablePath(summary.buildID)) }
        let richness = Self.richness(hasDebugInfo: summary.hasDebugInfo, hasSymbols: summary.hasSymbols)
        targets.removeAll { t in
            guard fm.fileExists(atPath: t) else { return false }
            guard t.hasSuffix(".debug") else { return true }  // the build's code, stored already
            guard let old = try? ELFSummary.read(path: t) else { return false }  // unreadable: replaced
            return Self.richness(hasDebugInfo: old.hasDebugInfo, hasSymbols: old.hasSymbols) >= richness
        }
        guard !targets.isEmpty else { try? fm.removeItem(atPath: path); return false }
        for (i, t) in targets.enumerated() {
            if i == targets.count - 1 {
                if rename(path, t) != 0 { throw CocoaError(.fileWriteUnknown) }
            } else {
                // A second name for the same file; removed again if it cannot be moved into place
                // (e.g. a build-id so long its file name exceeds NAME_MAX), so a failed install
                // never leaves anything in the staging directory.
                let staged = temporaryPath()
                if link(path, staged) != 0 { try fm.copyItem(atPath: path, toPath: staged) }
                if rename(staged, t) != 0 { unlink(staged); throw CocoaError(.fileWriteUnknown) }
            }
        }
        try? fm.removeItem(atPath: path)
        // The rename is durable only once its directory is: fsync it before the upload is acknowledged.
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { fsync(dfd); close(dfd) }
        if summary.hasDebugInfo || summary.hasSymbols {
            known.withLock { _ = $0.insert(summary.buildID) }
        }
        if let supplementary = summary.supplementaryBuildID { noteDependent(summary.buildID, onSupplementary: supplementary) }
        return true
    }
}
