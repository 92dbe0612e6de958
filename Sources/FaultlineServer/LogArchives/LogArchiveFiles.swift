// Archive files on disk, under names the server chooses: `<data>/log-archives/<project id>/
// <yyyymmdd>/<32 random hex>.gz`. Nothing a client sends is ever part of a path.
import Foundation
import FaultlineFiles

final class LogArchiveFiles: Sendable {
    let root: String
    private var staging: String { root + "/.staging" }

    init(dataDirectory: String) throws {
        root = dataDirectory + "/log-archives"
        try FileManager.default.createDirectory(atPath: root + "/.staging", withIntermediateDirectories: true)
    }

    /// The absolute path of a stored archive; nil for a name the server could not have made.
    func path(of storageName: String) -> String? {
        let parts = storageName.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].allSatisfy(\.isNumber), parts[1].count == 8, parts[1].allSatisfy(\.isNumber),
            parts[2].count == 35, parts[2].hasSuffix(".gz"), parts[2].dropLast(3).allSatisfy(\.isHexDigit)
        else { return nil }
        return root + "/" + storageName
    }

    /// Writes `body` durably (staging file, fsync, rename, folder fsync) and returns its name.
    func store(_ body: Data, projectID: Int64, received: Double) throws -> String {
        let day = Self.dayFormatter(received)
        let name = "\(projectID)/\(day)/\(Keys.randomHex(bytes: 16)).gz"
        let dir = root + "/\(projectID)/\(day)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let temporary = staging + "/\(Keys.randomHex(bytes: 16)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw FileError(message: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var ok = false
        defer { if !ok { unlink(temporary) } }
        let written = body.withUnsafeBytes { writeAll(fd, $0) }
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced else { throw FileError(message: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        guard rename(temporary, root + "/" + name) == 0 else { throw FileError(message: "cannot rename into \(dir): \(String(cString: strerror(errno)))") }
        ok = true
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { fsync(dfd); close(dfd) }
        return name
    }

    func remove(_ storageName: String) {
        if let p = path(of: storageName) { unlink(p) }
    }

    /// At start: staging leftovers, and files no row names (a crash between write and insert).
    func sweep(known: Set<String>) {
        for n in (try? FileManager.default.contentsOfDirectory(atPath: staging)) ?? [] { unlink(staging + "/" + n) }
        guard let e = FileManager.default.enumerator(atPath: root) else { return }
        while let rel = e.nextObject() as? String {
            guard rel.hasSuffix(".gz"), !rel.hasPrefix(".staging"), !known.contains(rel) else { continue }
            unlink(root + "/" + rel)
        }
    }

    static func dayFormatter(_ t: Double) -> String {
        var time = time_t(t)
        var tm = tm()
        gmtime_r(&time, &tm)
        return String(format: "%04d%02d%02d", Int(tm.tm_year) + 1900, Int(tm.tm_mon) + 1, Int(tm.tm_mday))
    }

    struct FileError: Error, CustomStringConvertible { let message: String; var description: String { message } }
}
