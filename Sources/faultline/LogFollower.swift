// Follows one log file like `tail -F`: survives the file log's trim (an atomic replace) and
// truncation, and never prints a line twice across a trim.
import Foundation

final class LogFollower {
    let path: String
    private var fd: Int32 = -1
    private var inode: ino_t = 0
    private var offset: off_t = 0
    private var partial: [UInt8] = []
    /// The last complete line handed out: after a trim it is found again in the new file and
    /// reading resumes after it (the file log's lines carry a timestamp and a thread id, so a
    /// repeat is practically impossible).
    private var lastLine: [UInt8]?

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
        let shown = Array(lines.suffix(count))
        if let l = shown.last { lastLine = l }
        return shown
    }

    /// New complete lines since the last call (empty when nothing changed).
    func poll() -> [[UInt8]] {
        var out: [[UInt8]] = []
        if fd >= 0 { out += lines(in: readToEnd()) }
        var st = stat()
        guard stat(path, &st) == 0 else { return out }  // gone for now (between unlink and rename)
        if fd < 0 || st.st_ino != inode {
            // Replaced (trimmed or rotated): finish the old file above, then resume in the new one
            // after the last line already shown.
            if fd >= 0 { close(fd); fd = -1 }
            guard open() else { return out }
            let all = readToEnd()
            if let last = lastLine, let r = Self.range(of: last + [10], in: all) {
                out += lines(in: Array(all[r.upperBound...]))
            } else {
                out += lines(in: all)
            }
        } else if st.st_size < offset {
            offset = 0  // truncated in place
            partial = []
            out += lines(in: readToEnd())
        }
        return out
    }

    private func open() -> Bool {
        fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
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
        if let l = out.last { lastLine = l }
        return out
    }

    /// The last occurrence of `needle` in `haystack`, if any.
    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        var i = haystack.count - needle.count
        while i >= 0 {
            if haystack[i] == needle[0] && haystack[i..<(i + needle.count)].elementsEqual(needle) { return i..<(i + needle.count) }
            i -= 1
        }
        return nil
    }
}
