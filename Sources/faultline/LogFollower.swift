// Follows one log file like `tail -F`: waits for a file that does not exist yet, survives the
// file log's trim (an atomic replace, or on a full disk a compaction in place) and truncation,
// and never prints a line twice across a trim.
//
// Guarantee: a trim keeps the newer part of the file, and the replaced file is final once it is
// renamed away (writers append only to the descriptor that still names the path). So when the
// follower sees a new inode it first reads the old file to its end through the descriptor it
// still holds, then resumes in the new file right after the last bytes it showed. One trim
// between two polls therefore loses nothing however much was written. Only when the file is
// trimmed twice between two polls can the bytes it last showed be gone from the new file: then
// the lines written in between that no trim kept were never on disk when the follower looked,
// they cannot be shown, and `gaps` counts the event so the console can say so. At the console's
// 50 ms poll that needs a whole cap of new output (2 MiB by default) within 50 ms. inotify would
// only narrow that window, not close it: the intermediate file can be replaced before any reader
// opens it.
//
// A compaction in place (the writer's trim on a full disk) keeps the inode: the trim count tells
// it, and the file is read again from its start under the writers' lock (shared), resuming after
// what was shown.
//
// Trimmed or new: the writer counts its trims in the file's lock file (LogTrimCount). A
// replacement or truncation without a new trim there, or after the path was seen missing, is a
// file deleted (or emptied) and written anew: it is shown from its start, and is no gap.
import FoundationEssentials
import Glibc
import FaultlineCommandLine
import FaultlineProtocol
import FaultlineFiles

final class LogFollower {
    let path: String
    private var fd: Int32 = -1
    private var inode: ino_t = 0
    private var offset: off_t = 0
    private var partial: [UInt8] = []
    /// The end of the stream handed out so far (up to 4 KiB, ending after a newline): after a
    /// trim it is found again in the new file and reading resumes after it. The file log's lines
    /// carry a timestamp and a thread id, so a false match is practically impossible; in a stderr
    /// capture of repeated lines the first match is taken, so an ambiguous match repeats lines
    /// rather than skip them.
    private var shown: [UInt8] = []
    private static let shownLimit = 4096
    /// How often a trimmed file was found that no longer contained `shown` (lines were lost).
    private(set) var gaps = 0
    /// How often the file was found deleted and created anew, or truncated by someone else.
    private(set) var recreations = 0
    /// The writer's trim count when last looked at (LogTrimCount).
    private var trims: UInt64 = 0
    /// The path was missing at some poll since the file was opened.
    private var vanished = false

    init(path: String) { self.path = path }

    /// Opens the file and returns its last `count` lines.
    func start(lastLines count: Int) -> [[UInt8]] {
        guard open() else { return [] }
        var st = stat()
        fstat(fd, &st)
        let size = st.st_size
        let window = min(size, off_t(max(65536, count * 4096)))
        let bytes = read(from: size - window, to: size)
        offset = size
        var lines = bytes.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        if lines.last?.isEmpty == true { lines.removeLast() } else if let p = lines.popLast() { partial = p }
        if window < size, !lines.isEmpty { lines.removeFirst() }  // probably cut by the window
        let result = Array(lines.suffix(count))
        for l in lines { remember(l) }
        return result
    }

    /// New complete lines since the last call (empty when nothing changed).
    func poll() -> [[UInt8]] {
        var out: [[UInt8]] = []
        if fd >= 0 {
            let bytes = readToEnd()
            if compactedInPlace() {
                // Before or during that read the writer moved the file's newer part to its start
                // (a trim on a full disk): what was read is no continuation. Read the file again
                // from its start, with writers held off so no compaction runs under the read.
                offset = 0
                partial = []
                return withSharedLock { resume(in: readToEnd()) }
            }
            out += lines(in: bytes)
        }
        var st = stat()
        guard stat(path, &st) == 0 else {
            // Gone: deleted (a new file may come), or for an instant between unlink and rename.
            if fd >= 0 { vanished = true }
            return out
        }
        if fd < 0 || st.st_ino != inode {
            // Replaced (trimmed or rotated): finish the old file (appends that raced with the read
            // above are in it, and it is final now), then resume in the new one after what was shown.
            if fd >= 0 { out += lines(in: readToEnd()); close(fd); fd = -1 }
            // open() drops the old file's unfinished last line: the new file repeats it after `shown`.
            guard open() else { return out }
            out += resume(in: readToEnd())
        } else if st.st_size < offset {
            // Truncated in place by someone else (a compaction is found above).
            offset = 0
            partial = []
            out += resume(in: readToEnd())
        }
        return out
    }

    /// The new lines of a file that replaced (or was compacted from) the one shown so far.
    private func resume(in all: [UInt8]) -> [[UInt8]] {
        let trimmed = takeNewTrims() && !vanished
        vanished = false
        if shown.isEmpty { return lines(in: all) }
        if let r = Self.firstRange(of: shown, in: all) ?? Self.firstRange(of: lastShownLine, in: all) {
            // (the last line alone: a small cap keeps less than `shown` holds)
            return lines(in: Array(all[r.upperBound...]))
        }
        if trimmed { gaps += 1 } else { recreations += 1 }
        return lines(in: all)
    }

    /// A trim since the last look, and the path still names the file read: it was compacted in
    /// place. (A trim by copy and rename gives the path a new file; the writer counts a
    /// compaction before it starts moving bytes, so a read that overlapped one sees it here.)
    private func compactedInPlace() -> Bool {
        guard LogTrimCount.read(forFile: path) > trims else { return false }
        var st = stat()
        return stat(path, &st) == 0 && st.st_ino == inode
    }

    /// Runs `body` holding the shared lock the writers' appends and trims take exclusively.
    private func withSharedLock<R>(_ body: () -> R) -> R {
        let lock = Glibc.open(LogTrimCount.lockPath(of: path), O_RDONLY | O_CLOEXEC)
        guard lock >= 0 else { return body() }
        defer { close(lock) }
        _ = retryingOnInterrupt { flock(lock, LOCK_SH) }
        defer { flock(lock, LOCK_UN) }
        return body()
    }

    /// Whether the writer trimmed since the last look.
    private func takeNewTrims() -> Bool {
        let now = LogTrimCount.read(forFile: path)
        defer { trims = now }
        return now > trims
    }

    private func open() -> Bool {
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        if inode == 0 { trims = LogTrimCount.read(forFile: path) }  // the first open: earlier trims are not news
        var st = stat()
        fstat(fd, &st)
        inode = st.st_ino
        offset = 0
        partial = []
        return true
    }

    private func read(from: off_t, to: off_t) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(to - from))
        var got = 0
        while got < out.count {
            let n = out.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, $0.count - got, from + off_t(got)) }
            if n <= 0 { break }
            got += n
        }
        return Array(out[..<got])
    }

    private func readToEnd() -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n <= 0 { break }
            out += chunk[..<n]
            offset += off_t(n)
        }
        return out
    }

    private func lines(in bytes: [UInt8]) -> [[UInt8]] {
        guard !bytes.isEmpty else { return [] }
        var all = partial + bytes
        partial = []
        if let lastNL = all.lastIndex(of: 10) {
            partial = Array(all[(lastNL + 1)...])
            all = Array(all[..<lastNL])
        } else {
            partial = all
            return []
        }
        let out = all.split(separator: 10, omittingEmptySubsequences: false).map(Array.init)
        for l in out { remember(l) }
        return out
    }

    /// The last line of `shown`, newline included.
    private var lastShownLine: [UInt8] {
        guard let nl = shown.dropLast().lastIndex(of: 10) else { return shown }
        return Array(shown[(nl + 1)...])
    }

    /// Adds one complete line (without its newline) to the end of `shown`.
    private func remember(_ line: [UInt8]) {
        shown += line
        shown.append(10)
        if shown.count > Self.shownLimit {
            // Keep whole lines: drop up to the first newline past the excess (a single line
            // longer than the limit is kept whole).
            let excess = shown.count - Self.shownLimit
            if let nl = shown[excess...].dropLast().firstIndex(of: 10) {
                shown.removeFirst(nl + 1)
            } else if let nl = shown.dropLast().lastIndex(of: 10) {
                shown.removeFirst(nl + 1)
            }
        }
    }

    /// The first occurrence of `needle` in `haystack`, if any.
    static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard !needle.isEmpty, needle.count <= haystack.count else { return nil }
        let first = needle[0]
        var i = 0
        while i <= haystack.count - needle.count {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
            i += 1
        }
        return nil
    }
}
