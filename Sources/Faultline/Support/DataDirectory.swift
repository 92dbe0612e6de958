// The SDK's on-disk layout: one directory per app, with fixed subdirectories.
import Foundation

struct DataDirectory: Sendable {
    let root: String
    var crashes: String { root + "/crashes" }
    var corruptCrashes: String { root + "/crashes/corrupt" }
    var outbox: String { root + "/outbox" }
    var installIDFile: String { root + "/install-id" }

    func create() throws {
        for dir in [root, crashes, outbox] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        }
    }

    /// A random id persisted once per install; delete the file to reset it.
    func installID() -> String {
        if let s = try? String(contentsOfFile: installIDFile, encoding: .utf8) {
            let t = s.trimmingCharacters(in: .whitespacesAndNewlines)
            if t.count == 32, t.allSatisfy(\.isHexDigit) { return t }
        }
        let id = newEventID()
        try? AtomicFile.write(Data(id.utf8), to: installIDFile)
        return id
    }
}

/// 32 lowercase hex characters from a random UUID (Sentry's event id format).
func newEventID() -> String { UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased() }

/// Write-then-rename, so a reader (or the next launch after kill -9) never sees half a file.
enum AtomicFile {
    static func write(_ data: Data, to path: String, sync: Bool = false) throws {
        let dir = (path as NSString).deletingLastPathComponent
        let tmp = dir + "/." + (path as NSString).lastPathComponent + ".\(getpid()).tmp"
        let fd = open(tmp, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIXError.errno("create \(tmp)") }
        defer { close(fd) }
        var written = 0
        try data.withUnsafeBytes { raw in
            while written < raw.count {
                let n = Foundation.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 {
                    if errno == EINTR { continue }
                    let e = POSIXError.errno("write \(tmp)")
                    unlink(tmp)
                    throw e
                }
                written += n
            }
        }
        if sync { fsync(fd) }
        guard rename(tmp, path) == 0 else {
            let e = POSIXError.errno("rename to \(path)")
            unlink(tmp)
            throw e
        }
        if sync {
            let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dfd >= 0 { fsync(dfd); close(dfd) }
        }
    }
}

struct POSIXError: Error, CustomStringConvertible {
    let operation: String
    let code: Int32
    static func errno(_ operation: String) -> POSIXError { POSIXError(operation: operation, code: Foundation.errno) }
    var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
