// The rolling log's folder: which files exist, which is oldest, and the caps that count them all.
//
// Layout (one writing process per folder; `.lock` enforces it):
//   <base>-<20-digit start nanoseconds>.log        the active file, or a rolled one awaiting gzip
//   <base>-<…>.log.gz                              a finished archive: complete, fsync'd, renamed
//   <base>-<…>.log.gz.tmp                          gzip in progress (removed at the next start)
//   .upload-state                                  the server's upload switch (UploadSwitch)
// Names sort in time order, so "oldest first" is name order. A `.gz` exists only once it is
// whole: a kill -9 leaves either the `.log` (compressed again at the next start, to the same
// bytes) or the `.gz` (its `.log` then is removed, never compressed twice).
import Foundation
import Synchronization

final class ArchiveDirectory: Sendable {
    let path: String
    let baseName: String

    struct File: Sendable, Equatable {
        let name: String
        let size: Int
        var isArchive: Bool { name.hasSuffix(".log.gz") }
    }

    /// Archives an uploader is sending now (full paths, process-wide: the logger and the
    /// uploader each have their own ArchiveDirectory): never evicted under it.
    private static let claimed = Mutex<Set<String>>([])

    init(path: String, baseName: String) {
        self.path = path
        self.baseName = baseName
    }

    func create() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// A new file name for a file started now (unique within this folder's single writer).
    func newLogName(now: timespec) -> String {
        let nanos = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
        return "\(baseName)-" + String(format: "%020llu", nanos) + ".log"
    }

    /// Every log and archive file, oldest first.
    func files() -> [File] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.filter { $0.hasPrefix(baseName + "-") && ($0.hasSuffix(".log") || $0.hasSuffix(".log.gz")) }.sorted().compactMap { n in
            var st = stat()
            guard stat(path + "/" + n, &st) == 0 else { return nil }
            return File(name: n, size: Int(st.st_size))
        }
    }

    /// Finished archives, oldest first (what the uploader sends).
    func archives() -> [File] { files().filter(\.isArchive) }

    /// Start of a run: removes gzip temporaries, empty `.log` files, and `.log` files whose `.gz` is already whole.
    /// Returns the `.log` files left by earlier runs (to be compressed), oldest first.
    func recoverLeftovers() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let set = Set(names)
        for n in names where n.hasPrefix(baseName + "-") && n.hasSuffix(".gz.tmp") { unlink(path + "/" + n) }
        var logs: [String] = []
        for n in names.sorted() where n.hasPrefix(baseName + "-") && n.hasSuffix(".log") {
            var st = stat()
            let empty = stat(path + "/" + n, &st) == 0 && st.st_size == 0  // an idle active file: nothing to archive
            if set.contains(n + ".gz") || empty { unlink(path + "/" + n) } else { logs.append(n) }
        }
        return logs
    }

    func claim(_ name: String) { _ = Self.claimed.withLock { $0.insert(path + "/" + name) } }
    func release(_ name: String) { _ = Self.claimed.withLock { $0.remove(path + "/" + name) } }

    /// Deletes the oldest archives while more than `maxFiles` files exist or they will hold more
    /// than `maxBytes` once compressed: archives count their size, a `.log` (the active file, or
    /// a rolled one waiting for gzip) its size times `compressionRatio`. Only archives are ever
    /// deleted, never a `.log` (it is still to be compressed) nor a claimed archive (being
    /// uploaded): the caps may be passed until the files waiting for gzip are archives. The one
    /// exception is a `.log` in `uncompressible` (its compression failed, say on a full disk):
    /// once no archive is left to delete it may go too, oldest first, or a compressor that keeps
    /// failing would let the folder grow without bound.
    /// Returns the names deleted (each one a loss: nothing deleted here was uploaded).
    func enforceCaps(maxFiles: Int, maxBytes: Int, compressionRatio: Double, uncompressible: Set<String> = []) -> [String] {
        var all = files()
        var bytes = all.reduce(0) { $0 + Self.expectedSize($1, compressionRatio) }
        var evicted: [String] = []
        let busy = Self.claimed.withLock { $0 }
        while all.count > maxFiles || bytes > maxBytes {
            guard
                let i = all.firstIndex(where: { $0.isArchive && !busy.contains(path + "/" + $0.name) })
                    ?? all.firstIndex(where: { uncompressible.contains($0.name) })
            else { break }
            let victim = all.remove(at: i)
            bytes -= victim.size
            // ENOENT: the uploader removed it after the server took it, which is not a loss.
            if unlink(path + "/" + victim.name) == 0 { evicted.append(victim.name) }
        }
        return evicted
    }

    /// The bytes a file will hold once it is an archive.
    static func expectedSize(_ file: File, _ compressionRatio: Double) -> Int {
        file.isArchive ? file.size : Int((Double(file.size) * compressionRatio).rounded(.up))
    }

    /// fsync of the folder, so a rename survives a power loss.
    func syncDirectory() {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 { fsync(fd); close(fd) }
    }
}
