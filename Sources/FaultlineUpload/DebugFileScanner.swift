// Finds the debug files a user points at: ELF files with a build-id and DWARF or a symbol table,
// under files and directories given directly or through symbolic links (SwiftPM's
// `.build/release` is one), each build-id once.
import Foundation
import FaultlineProtocol
import FaultlineSymbolication

/// One file `faultline upload` will send.
public struct UploadCandidate: Sendable {
    /// The path as the user would write it (links not resolved, no doubled slashes).
    public let path: String
    public let summary: ELFSummary
    public let size: Int64
}

/// Why a file met during the walk is not uploaded. Counted, never printed one by one: a build
/// directory holds thousands of object files, modules and scripts.
public enum SkipReason: String, Sendable, CaseIterable {
    case notELF = "not_elf"
    case noBuildID = "no_build_id"
    /// Stripped: neither DWARF nor a symbol table (what the split recipe ships).
    case noDebugInfo = "no_debug_info"
    /// Another file with the same build-id was kept (a copy, a hard link, a stripped twin).
    case duplicateBuildID = "duplicate_build_id"
    /// An ELF file the server would refuse (corrupt, zstd-compressed DWARF); its message is kept.
    case unreadable = "unreadable"
}

public struct DebugFileScan: Sendable {
    public var candidates: [UploadCandidate] = []
    public var missing: [String] = []
    public var skipped: [SkipReason: Int] = [:]
    /// Files that look like something the user wanted uploaded but cannot be (with the reason).
    public var problems: [(path: String, reason: String)] = []
    /// Directories entered a second time through a link (loops, or two links to one place).
    public var directoriesSeenTwice = 0

    public var skippedTotal: Int { skipped.values.reduce(0, +) }

    /// "3 not ELF, 1 stripped" — empty when nothing was skipped.
    public var skippedDescription: String {
        let words: [SkipReason: String] = [
            .notELF: "not ELF", .noBuildID: "without build-id", .noDebugInfo: "stripped",
            .duplicateBuildID: "duplicate build-id", .unreadable: "unreadable"
        ]
        return SkipReason.allCases.compactMap { r in skipped[r].map { "\($0) \(words[r]!)" } }.joined(separator: ", ")
    }
}

public enum DebugFileScanner {
    /// Walks `paths` (files or directories, links followed). A directory is entered once per
    /// (device, inode), which is the loop protection; a file is read once per (device, inode).
    /// When several files share a build-id, the one with DWARF wins, then the one with symbols,
    /// then the first met (entries are visited in sorted order, so runs are repeatable). The
    /// build's executable is sent beside a separate debug file of its build-id: its code and
    /// `.eh_frame` (the call frame information a minidump is walked with) are NOBITS in a debug file
    /// made by `objcopy --only-keep-debug`, and the server keeps the two side by side.
    public static func scan(_ paths: [String]) -> DebugFileScan {
        var walk = Walk()
        for p in paths {
            let clean = cleanPath(p)
            var st = stat()
            guard stat(clean, &st) == 0 else { walk.result.missing.append(p); continue }
            if (st.st_mode & S_IFMT) == S_IFDIR { walk.directory(clean, st) } else { walk.file(clean, st) }
        }
        walk.result.candidates = walk.order.flatMap { id -> [UploadCandidate] in
            guard let kept = walk.best[id] else { return [] }
            guard !kept.summary.isExecutable, let code = walk.executable[id] else { return [kept] }
            // Counted as skipped when met: a duplicate, or stripped when it has no symbols at all.
            walk.result.skipped[code.summary.hasDebugInfo || code.summary.hasSymbols ? .duplicateBuildID : .noDebugInfo, default: 0] -= 1
            return [kept, code]
        }
        walk.result.skipped = walk.result.skipped.filter { $0.value > 0 }
        return walk.result
    }

    /// Every ELF file under `paths` with a build-id, links followed, each (device, inode) once —
    /// what `debug-files split` works on (it wants the files with code, not only the debug ones).
    public static func elfFiles(_ paths: [String]) -> (files: [String], missing: [String]) {
        var walk = Walk()
        walk.keepAllELF = true
        for p in paths {
            let clean = cleanPath(p)
            var st = stat()
            guard stat(clean, &st) == 0 else { walk.result.missing.append(p); continue }
            if (st.st_mode & S_IFMT) == S_IFDIR { walk.directory(clean, st) } else { walk.file(clean, st) }
        }
        return (walk.allELF, walk.result.missing)
    }

    /// `a//b/` → `a/b`; `/` stays `/`. Only cosmetic: `..` and links are left as given.
    public static func cleanPath(_ p: String) -> String {
        guard !p.isEmpty else { return p }
        var out = ""
        var lastSlash = false
        for c in p {
            if c == "/" { if lastSlash { continue }; lastSlash = true } else { lastSlash = false }
            out.append(c)
        }
        while out.count > 1 && out.hasSuffix("/") { out.removeLast() }
        return out
    }

    static func join(_ dir: String, _ name: String) -> String { dir == "/" ? "/" + name : dir + "/" + name }

    struct FileKey: Hashable { let dev: UInt64; let ino: UInt64 }

    struct Walk {
        var result = DebugFileScan()
        var enteredDirectories = Set<FileKey>()
        var readFiles = Set<FileKey>()
        var best: [BuildID: UploadCandidate] = [:]
        /// The first file met with the build's code, per build-id (sent beside a debug-only file).
        var executable: [BuildID: UploadCandidate] = [:]
        var order: [BuildID] = []
        var keepAllELF = false
        var allELF: [String] = []

        mutating func directory(_ path: String, _ st: stat) {
            guard enteredDirectories.insert(FileKey(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino))).inserted else {
                result.directoriesSeenTwice += 1
                return
            }
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else {
                result.problems.append((path, "cannot read the directory"))
                return
            }
            for name in names.sorted() {
                let child = DebugFileScanner.join(path, name)
                var cst = stat()
                // stat, not lstat: links to files and directories are followed; a dangling link is skipped.
                guard stat(child, &cst) == 0 else { continue }
                switch cst.st_mode & S_IFMT {
                case S_IFDIR: directory(child, cst)
                case S_IFREG: file(child, cst)
                default: continue
                }
            }
        }

        mutating func file(_ path: String, _ st: stat) {
            guard (st.st_mode & S_IFMT) == S_IFREG else { result.skipped[.notELF, default: 0] += 1; return }
            guard readFiles.insert(FileKey(dev: UInt64(st.st_dev), ino: UInt64(st.st_ino))).inserted else { return }
            guard st.st_size >= 64, DebugFileScanner.isELF(path) else { result.skipped[.notELF, default: 0] += 1; return }
            let summary: ELFSummary
            do { summary = try ELFSummary.read(path: path) } catch {
                switch error {
                case .noBuildID: result.skipped[.noBuildID, default: 0] += 1
                case .notELF: result.skipped[.notELF, default: 0] += 1
                default:
                    result.skipped[.unreadable, default: 0] += 1
                    result.problems.append((path, error.description))
                }
                return
            }
            if keepAllELF { allELF.append(path); return }
            let candidate = UploadCandidate(path: path, summary: summary, size: Int64(st.st_size))
            if summary.isExecutable, executable[summary.buildID] == nil { executable[summary.buildID] = candidate }
            guard summary.hasDebugInfo || summary.hasSymbols else { result.skipped[.noDebugInfo, default: 0] += 1; return }
            guard let kept = best[summary.buildID] else {
                best[summary.buildID] = candidate
                order.append(summary.buildID)
                return
            }
            result.skipped[.duplicateBuildID, default: 0] += 1
            if Self.rank(summary) > Self.rank(kept.summary) { best[summary.buildID] = candidate }
        }

        static func rank(_ s: ELFSummary) -> Int { (s.hasDebugInfo ? 2 : 0) + (s.hasSymbols ? 1 : 0) }
    }

    static func isELF(_ path: String) -> Bool {
        guard let fh = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? fh.close() }
        return (try? fh.read(upToCount: 4)) == Data([0x7f, 0x45, 0x4c, 0x46])
    }
}
