// The rolling file log: a sink that writes the file log's line format into a folder of files,
// rolls by size and by age, gzips rolled files on a thread of its own, and keeps the folder
// under a file count and a byte total that both count the compressed archives.
//
// Threads. `log(_:)` formats the line on the caller's thread and appends it to a byte queue
// (one lock, no I/O); lines at or above `synchronousLevel` are written before it returns. The
// writer thread ("faultline.rolling") appends queued lines with one write per batch and rolls;
// the compressor thread ("faultline.gzip") turns each rolled `.log` into `.log.gz` and then
// enforces the caps, deleting the oldest archives. A `.log` waiting for compression is never
// deleted: under a burst the folder holds more than the caps until the compressor catches up,
// then the caps hold again with the newest archives. The byte cap counts what will remain: an
// archive's size, and a `.log` at its size times the compression ratio seen so far. Neither ever waits for the network: `Faultline.start` with
// `Options.logArchiveDirectory` uploads the `.gz` files from the SDK's own thread.
//
// Crash safety: see ArchiveDirectory (temp + fsync + rename; leftovers compressed at next start).
// Lines still queued in memory when the process is killed are lost, as with any buffered log;
// lines at or above `synchronousLevel` are never in that queue.
import FaultlineThreads
import Foundation
import Synchronization
import FaultlineFiles

public final class RollingFileLogger: Logger, @unchecked Sendable {
    public struct Configuration: Sendable {
        /// The folder of logs and archives (created). One process writes to it at a time.
        public var directory: String
        /// File names are `<baseName>-<start time in ns>.log[.gz]`.
        public var baseName = "app"
        /// A file rolls before a write would take it past this size (at a line boundary).
        public var maximumFileBytes = 1024 * 1024
        /// A non-empty file rolls once it is this old (seconds).
        public var maximumFileAge: Double = 3600
        /// At most this many files, counting the active file, rolled files and `.gz` archives
        /// (the oldest archives are deleted; rolled files waiting for gzip never are).
        public var maximumFiles = 10
        /// At most this many bytes in all of them together once compressed: archives count their
        /// size, the active file and files waiting for gzip their expected compressed size.
        public var maximumTotalBytes = 10 * 1024 * 1024
        public var minimumLevel: LogLevel = .trace
        /// Lines at or above this level are in the file when `log(_:)` returns.
        public var synchronousLevel: LogLevel = .error
        /// Bytes of lines that may wait for the writer; past it the caller writes itself.
        public var queueBytes = 256 * 1024
        /// zlib level of the archives (1 fastest, 9 smallest).
        public var compressionLevel: Int32 = 6
        public init(directory: String) { self.directory = directory }
    }

    public enum OpenError: Error, CustomStringConvertible {
        case cannotCreate(String)
        case inUse(String)
        public var description: String {
            switch self {
            case .cannotCreate(let m): return "cannot use the rolling log folder: \(m)"
            case .inUse(let d): return "another process writes rolling logs to \(d); give each process its own folder"
            }
        }
    }

    public let configuration: Configuration
    let folder: ArchiveDirectory

    private struct Active {
        var fd: Int32 = -1
        var name = ""
        var size = 0
        var opened = 0.0  // monotonic seconds
        var closed = false
        var failing = false
    }
    private let queue = Mutex<[UInt8]>([])
    private let active = Mutex(Active())
    /// The writer thread; its state is when the next pass is due (the age check) even without lines.
    private let writer: WorkerThread<Date>
    private let stopping = Atomic<Bool>(false)
    private let pid = getpid()
    private let lockFD: Int32

    private struct CompressQueue {
        var toCompress: [String]
        var compressing = 0
    }
    private let compressor: WorkerThread<CompressQueue>
    private let evicted = Atomic<Int>(0)
    private let ratio = CompressionRatio()
    /// Rolled files whose compression failed: the caps may delete them once no archive is left.
    private let uncompressible = Mutex<Set<String>>([])

    /// Archives deleted by the caps before they were uploaded (lost), since start.
    public var evictedFiles: Int { evicted.load(ordering: .relaxed) }

    /// Opens the folder, compresses what earlier runs left, and starts both threads.
    public init(_ configuration: Configuration) throws(OpenError) {
        self.configuration = configuration
        folder = ArchiveDirectory(path: configuration.directory, baseName: configuration.baseName)
        do { try folder.create() } catch { throw .cannotCreate("\(configuration.directory): \(error.localizedDescription)") }
        lockFD = open(configuration.directory + "/.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lockFD >= 0 else { throw .cannotCreate("\(configuration.directory)/.lock: \(String(cString: strerror(errno)))") }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { Glibc.close(lockFD); throw .inUse(configuration.directory) }
        compressor = WorkerThread(name: "faultline.gzip", state: CompressQueue(toCompress: folder.recoverLeftovers()))
        writer = WorkerThread(name: "faultline.rolling", state: Date(timeIntervalSinceNow: Self.writerPeriod(configuration)))
        active.withLock { a in openNewFile(&a) }
        Self.registerForExit(self)
        writer.start(prepare: { Worker.blockAppSignals() }) { [self] due, stopping in writerStep(&due, stopping) }
        compressor.start(prepare: { [self] in
            Worker.blockAppSignals()
            enforceCaps()
        }) { [self] q, stopping in compressorStep(&q, stopping) }
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= configuration.minimumLevel }

    public func log(_ event: LogEvent) {
        guard event.level >= configuration.minimumLevel, !stopping.load(ordering: .relaxed) else { return }
        let sync = event.level >= configuration.synchronousLevel
        let maxLine = max(256, min(configuration.maximumFileBytes, 64 * 1024))
        let (first, full) = LogLineFormat.withLine(event, pid: pid, maxBytes: maxLine) { line in
            queue.withLock { q -> (Bool, Bool) in
                let wasEmpty = q.isEmpty
                q.append(contentsOf: line)
                return (wasEmpty, q.count >= configuration.queueBytes)
            }
        }
        if sync || full { flush() } else if first { writer.wake() }
    }

    /// Writes every queued line before returning.
    public func flush() {
        active.withLock { a in drain(&a) }
    }

    /// Rolls the active file now (if it has lines) and returns; the archive follows shortly.
    public func roll() {
        active.withLock { a in
            drain(&a)
            if a.size > 0 { rollFile(&a) }
        }
    }

    /// Waits until no rolled file waits for compression. True if that happened within `timeout`.
    @discardableResult
    public func waitForArchives(timeout: Double) -> Bool {
        compressor.wait(until: Date().addingTimeInterval(timeout)) { $0.toCompress.isEmpty && $0.compressing == 0 }
    }

    /// Writes what is queued and stops both threads (a rolled file still waiting is compressed at
    /// the next start). The active file stays a `.log`: the next start archives it.
    public func close() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        writer.stop()
        active.withLock { a in
            drain(&a)
            if a.fd >= 0 { Glibc.close(a.fd); a.fd = -1 }
            a.closed = true
        }
        // The compressor finishes what is queued, then ends (not joined).
        compressor.requestStop()
        Glibc.close(lockFD)
    }

    // MARK: writer

    /// How often the writer looks at the active file's age while no line arrives.
    private static func writerPeriod(_ c: Configuration) -> Double { min(1, max(0.05, c.maximumFileAge / 4)) }

    /// A pass when lines are queued or the period has passed; `close` drains after the thread ends.
    private func writerStep(_ due: inout Date, _ stopping: Bool) -> WorkerThread<Date>.Step {
        if stopping { return .exit }
        if queue.withLock({ $0.isEmpty }) && Date() < due { return .wait(until: due) }
        due = Date(timeIntervalSinceNow: Self.writerPeriod(configuration))
        return .run { [self] in
            active.withLock { a in
                drain(&a)
                if a.size > 0 && Self.monotonic() - a.opened >= configuration.maximumFileAge { rollFile(&a) }
            }
        }
    }

    /// Appends the queued bytes, rolling at line boundaries so no file passes the size cap
    /// (unless one line alone does). Caller holds the active-file lock.
    private func drain(_ a: inout Active) {
        let batch = queue.withLock { q -> [UInt8] in
            defer { q.removeAll(keepingCapacity: true) }; return q
        }
        guard !batch.isEmpty, !a.closed else { return }
        batch.withUnsafeBytes { raw in
            var rest = raw[...]
            while !rest.isEmpty {
                let room = configuration.maximumFileBytes - a.size
                if rest.count <= room { append(&a, UnsafeRawBufferPointer(rebasing: rest)); break }
                let window = rest.prefix(max(room, 0))
                if let nl = window.lastIndex(of: 10) {
                    append(&a, UnsafeRawBufferPointer(rebasing: rest[..<(nl + 1)]))
                    rest = rest[(nl + 1)...]
                } else if a.size == 0 {
                    // One line longer than a whole file: it gets a file of its own.
                    let end = rest.firstIndex(of: 10).map { $0 + 1 } ?? rest.endIndex
                    append(&a, UnsafeRawBufferPointer(rebasing: rest[..<end]))
                    rest = rest[end...]
                }
                if !rest.isEmpty || a.size >= configuration.maximumFileBytes { rollFile(&a) }
            }
        }
    }

    private func append(_ a: inout Active, _ bytes: UnsafeRawBufferPointer) {
        guard a.fd >= 0 || reopen(&a) else { return }
        guard writeAll(a.fd, bytes) else {
            if !a.failing {
                a.failing = true
                let text = "faultline: cannot write the rolling log in \(configuration.directory): \(String(cString: strerror(errno)))\n"
                _ = text.utf8CString.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count - 1) }
            }
            return
        }
        a.failing = false
        a.size += bytes.count
    }

    private func reopen(_ a: inout Active) -> Bool {
        openNewFile(&a)
        return a.fd >= 0
    }

    private func openNewFile(_ a: inout Active) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var name = folder.newLogName(now: now)
        if name <= a.name { name = a.name.replacingOccurrences(of: ".log", with: "") + "1.log" }  // same nanosecond
        a.fd = open(configuration.directory + "/" + name, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        a.name = name
        a.size = 0
        a.opened = Self.monotonic()
    }

    private func rollFile(_ a: inout Active) {
        if a.fd >= 0 { Glibc.close(a.fd) }
        let rolled = a.name
        openNewFile(&a)
        compressor.update { $0.toCompress.append(rolled) }
    }

    // MARK: compressor

    /// One rolled file at a time, oldest first; after a stop request, what is queued, then the end.
    private func compressorStep(_ q: inout CompressQueue, _ stopping: Bool) -> WorkerThread<CompressQueue>.Step {
        guard !q.toCompress.isEmpty else { return stopping ? .exit : .wait(until: nil) }
        let name = q.toCompress.removeFirst()
        q.compressing += 1
        return .run { [self] in
            do {
                let sizes = try ArchiveCompressor.compress(directory: folder, name: name, level: configuration.compressionLevel)
                ratio.record(raw: sizes.raw, compressed: sizes.compressed)
            } catch {
                // The `.log` stays and is compressed at the next start; the caps still count it,
                // and may delete it when nothing else is left to delete.
                _ = uncompressible.withLock { $0.insert(name) }
                Faultline.warnOnce("cannot compress rolled log \(name): \(error)")
            }
            enforceCaps()
            compressor.update { $0.compressing -= 1 }
            Worker.shared?.wake()
        }
    }

    private func enforceCaps() {
        let gone = folder.enforceCaps(
            maxFiles: max(configuration.maximumFiles, 1), maxBytes: configuration.maximumTotalBytes, compressionRatio: ratio.current,
            uncompressible: uncompressible.withLock { $0 })
        guard !gone.isEmpty else { return }
        _ = uncompressible.withLock { set in set.subtract(gone) }
        evicted.add(gone.count, ordering: .relaxed)
        ArchiveDrops.record(gone.count)
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: exit

    private static let live = Mutex<[Weak]>([])
    private struct Weak { weak var logger: RollingFileLogger? }
    private static func registerForExit(_ l: RollingFileLogger) {
        let first = live.withLock { list in
            list.append(Weak(logger: l))
            return list.count == 1
        }
        if first { atexit { for w in RollingFileLogger.live.withLock({ $0 }) { w.logger?.flush() } } }
    }
}
