// The SDK's on-disk layout: one directory per app, with fixed subdirectories.
import FaultlineCrashPickup
import Foundation
import FaultlineFiles

struct DataDirectory: Sendable {
    let root: String
    var crashes: String { root + "/crashes" }
    var corruptCrashes: String { root + "/crashes/corrupt" }
    var outbox: String { root + "/outbox" }
    var installIDFile: String { root + "/install-id" }

    /// The root and its subdirectories (normal context, start's background half).
    func create() throws {
        for dir in [root, crashes, outbox] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
    }

    /// Start's check on the app's thread, which creates nothing: true when the root is a directory
    /// already; false when it does not exist but the nearest directory above it that does is
    /// writable, so start's background half can make it. Creating a directory is a disk
    /// allocation the app need not wait for (and a crash that comes first makes the crash
    /// directory itself). Throws when neither.
    func rootExists() throws -> Bool {
        var info = stat()
        var path = root
        while stat(path, &info) != 0 {
            guard errno == ENOENT, path != "/", path != "." else { throw POSIXError.errno("stat \(path)") }
            let parent = path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[..<$0]) } ?? "."
            path = parent.isEmpty ? "/" : parent
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw POSIXError(operation: "use \(path)", code: ENOTDIR) }
        if path == root { return true }
        guard faccessat(AT_FDCWD, path, W_OK | X_OK, AT_EACCESS) == 0 else { throw POSIXError.errno("create \(root) in \(path)") }
        return false
    }

    /// The root alone, with mkdir(2) and mode 0700 (FileManager's first use costs tens of
    /// microseconds, and it would use the umask's mode). One call when it exists; the whole path
    /// only when it does not.
    func createRoot() throws {
        if mkdir(root, 0o700) == 0 || errno == EEXIST { return }
        var partial = root.hasPrefix("/") ? "" : "."  // a relative root stays relative
        for component in root.split(separator: "/", omittingEmptySubsequences: true) {
            partial += "/" + component
            if mkdir(partial, 0o700) != 0 && errno != EEXIST { throw POSIXError.errno("mkdir \(partial)") }
        }
    }

    /// The install id in the file, if it holds one (read with open/read: start needs it on the
    /// app's thread for the crash context).
    func storedInstallID() -> String? {
        let fd = open(installIDFile, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 80)
        let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        // Trimmed by index on the array itself: a reversed or lazy view here made String(decoding:)
        // ask at run time whether it is contiguous, and a failing protocol cast scans every loaded
        // library's conformances (most of start's time on the app's thread, at every launch but
        // the first).
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || ($0 >= 0x09 && $0 <= 0x0D) }
        var lower = 0, upper = n
        while lower < upper && isSpace(bytes[lower]) { lower += 1 }
        while upper > lower && isSpace(bytes[upper - 1]) { upper -= 1 }
        guard upper - lower == 32 else { return nil }
        for b in bytes[lower..<upper] where !((b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66)) { return nil }
        return String(decoding: bytes[lower..<upper], as: UTF8.self)
    }

    /// A random id persisted once per install; delete the file to reset it. A new one is written
    /// by `persistInstallID` (start's background half).
    func installID() -> (id: String, isNew: Bool) {
        if let id = storedInstallID() { return (id, false) }
        return (newEventID(), true)
    }

    func persistInstallID(_ id: String) {
        guard storedInstallID() == nil else { return }
        try? AtomicFile.write(Data(id.utf8), to: installIDFile)
    }
}

/// 32 lowercase hex characters of a random version-4 UUID (Sentry's event id format), from the
/// system's random generator: Foundation's UUID string and its case conversion are slow on first
/// use, and start needs two of these on the app's thread.
func newEventID() -> String {
    var g = SystemRandomNumberGenerator()
    // Two words written out byte by byte (no generic collection of bytes: their first use in a
    // process costs a run-time type lookup, and start makes two of these on the app's thread).
    let words = (g.next(), g.next())
    let hex: StaticString = "0123456789abcdef"
    var out = [UInt8](repeating: 0, count: 32)
    for i in 0..<16 {
        var b = UInt8(truncatingIfNeeded: (i < 8 ? words.0 : words.1) >> (8 * UInt64(i % 8)))
        if i == 6 { b = (b & 0x0F) | 0x40 }  // a version-4 UUID, as Sentry expects
        if i == 8 { b = (b & 0x3F) | 0x80 }
        hex.withUTF8Buffer { h in
            out[2 * i] = h[Int(b >> 4)]
            out[2 * i + 1] = h[Int(b & 15)]
        }
    }
    return String(decoding: out, as: UTF8.self)
}

/// Write-then-rename, so a reader (or the next launch after kill -9) never sees half a file.
