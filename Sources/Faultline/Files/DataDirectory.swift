// The SDK's on-disk layout: one directory per app, with fixed subdirectories.
import FaultlineCrashPickup
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
