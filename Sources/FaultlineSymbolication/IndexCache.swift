// Persisted indexes: one file per build-id and format version, mapped read-only when loaded.
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// A directory of index files named `<build-id>.v<format>.fltidx`. Loading validates the file
/// (magic, version, build-id, size, checksum); a stale or corrupt file is deleted and reported as
/// absent so the caller rebuilds it. Writes go to a temporary name and are renamed into place, so
/// concurrent readers see either the old file or the complete new one.
struct IndexCache: Sendable {
    let directory: String

    /// `$XDG_CACHE_HOME/faultline`, else `~/.cache/faultline`, else a directory under /tmp.
    static var defaultDirectory: String {
        if let x = getenv("XDG_CACHE_HOME"), x.pointee != 0 { return String(cString: x) + "/faultline" }
        if let h = getenv("HOME"), h.pointee != 0 { return String(cString: h) + "/.cache/faultline" }
        return "/tmp/faultline-cache-\(getuid())"
    }

    /// A cache directory somebody else owns (or can write) could be used to plant indexes: the
    /// checksum finds corruption, not forgery. Only our own 0700-style directory is used.
    static func isSafeDirectory(_ path: String) -> Bool {
        var st = stat()
        guard lstat(path, &st) == 0 else { return true }  // absent: we create it, with 0700
        return (st.st_mode & S_IFMT) == S_IFDIR && st.st_uid == getuid() && (st.st_mode & 0o022) == 0
    }

    func path(for buildID: BuildID) -> String {
        "\(directory)/\(buildID.hex).v\(IndexFormat.version).fltidx"
    }

    /// The stored index for `buildID`, or nil when there is none or it cannot be trusted.
    /// - Parameter fewLookups: the caller will look up only a few addresses (a crash report, an
    ///   address or two): the pages the checksum reads are then dropped again as it goes, or the
    ///   whole file (megabytes for a large library) would count in the peak memory of a run that
    ///   needs a few pages of it. Many lookups read most of it anyway and keep the pages mapped.
    func load(_ buildID: BuildID, fewLookups: Bool = false) -> DWARFIndex? {
        let p = path(for: buildID)
        let fd = open(p, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_size >= IndexFormat.headerSize else { discard(p); return nil }
        let length = Int(st.st_size)
        guard let mem = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mem != MAP_FAILED else { return nil }
        guard IndexCache.checksumMatches(UnsafeRawPointer(mem), length: length, releasing: fewLookups) else {
            munmap(mem, length); discard(p); return nil
        }
        do {
            return try DWARFIndex(
                memory: UnsafeRawPointer(mem), length: length, expectedBuildID: buildID, verifyChecksum: false,
                release: { p, n in munmap(UnsafeMutableRawPointer(mutating: p), n) })
        } catch {
            discard(p)
            return nil
        }
    }

    /// Whether the payload's checksum equals the one in the header (`IndexFormat.checksum`);
    /// with `releasing`, the mapped pages are dropped a stretch at a time (read-only file pages).
    static func checksumMatches(_ base: UnsafeRawPointer, length: Int, releasing: Bool) -> Bool {
        guard length >= IndexFormat.headerSize else { return false }
        let stored = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        let stretch = 1 << 20  // a multiple of the page size
        var sum = IndexChecksum(payloadBytes: length - IndexFormat.headerSize)
        var offset = IndexFormat.headerSize
        while offset < length {
            let end = min(length, (offset / stretch + 1) * stretch)
            sum.add(UnsafeRawBufferPointer(start: base + offset, count: end - offset))
            if releasing {
                let first = offset / stretch * stretch
                _ = madvise(UnsafeMutableRawPointer(mutating: base + first), end - first, MADV_DONTNEED)
            }
            offset = end
        }
        return sum.finish() == stored
    }

    /// Stores `index` for `buildID`. Best effort: a read-only or full disk only costs speed.
    @discardableResult
    func store(_ index: DWARFIndex, for buildID: BuildID) -> Bool {
        guard makeDirectories(directory) else { return false }
        let final = path(for: buildID)
        let tmp = final + ".tmp.\(getpid()).\(UInt64.random(in: 0...UInt64.max))"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return false }
        var ok = index.write(to: fd)
        ok = close(fd) == 0 && ok
        if !ok || rename(tmp, final) != 0 { unlink(tmp); return false }
        return true
    }

    func remove(_ buildID: BuildID) { discard(path(for: buildID)) }

    private func discard(_ p: String) { unlink(p) }

    private func makeDirectories(_ dir: String) -> Bool {
        var st = stat()
        if stat(dir, &st) == 0 { return (st.st_mode & S_IFMT) == S_IFDIR }
        let parent = dir.contains("/") ? String(dir[..<dir.lastIndex(of: "/")!]) : ""
        if !parent.isEmpty && !makeDirectories(parent) { return false }
        return mkdir(dir, 0o755) == 0 || errno == EEXIST
    }
}
