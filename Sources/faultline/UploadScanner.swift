// Finds what `faultline upload` sends: ELF files with a build-id and DWARF or a symbol table.
import Foundation
import FaultlineServer
import FaultlineProtocol

struct UploadCandidate {
    let path: String
    let summary: ELFSummary
    let size: Int64
}

enum UploadScanner {
    struct Result {
        var candidates: [UploadCandidate] = []
        var missing: [String] = []
        var skipped: [(path: String, reason: String)] = []
    }

    /// Walks files and directories (symlinked directories are not followed, so no loops).
    static func scan(_ paths: [String]) -> Result {
        var r = Result()
        var seen = Set<String>()
        let fm = FileManager.default
        func consider(_ path: String) {
            var st = stat()
            guard lstat(path, &st) == 0 else { r.missing.append(path); return }
            if (st.st_mode & S_IFMT) == S_IFLNK {
                guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return }
            }
            guard (st.st_mode & S_IFMT) == S_IFREG, st.st_size >= 64 else { return }
            let real = (path as NSString).resolvingSymlinksInPath
            guard !seen.contains(real), isELF(path) else { return }
            seen.insert(real)
            do {
                let s = try ELFSummary.read(path: path)
                if s.hasDebugInfo || s.hasSymbols {
                    r.candidates.append(UploadCandidate(path: path, summary: s, size: Int64(st.st_size)))
                } else {
                    r.skipped.append((path, "no debug info or symbols (stripped)"))
                }
            } catch {
                r.skipped.append((path, error.description))
            }
        }
        for p in paths {
            var isDir: ObjCBool = false
            guard fm.fileExists(atPath: p, isDirectory: &isDir) else { r.missing.append(p); continue }
            if isDir.boolValue {
                guard let e = fm.enumerator(atPath: p) else { r.missing.append(p); continue }
                while let rel = e.nextObject() as? String { consider(p + "/" + rel) }
            } else {
                consider(p)
            }
        }
        return r
    }

    static func isELF(_ path: String) -> Bool {
        guard let fh = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? fh.close() }
        return (try? fh.read(upToCount: 4)) == Data([0x7f, 0x45, 0x4c, 0x46])
    }
}
