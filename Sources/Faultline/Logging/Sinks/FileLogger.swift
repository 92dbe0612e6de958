// The size-capped file log: lines formatted on the caller's thread, written by a thread of its own.
//
// Design. `log(_:)` formats the line into a stack buffer (no formatter object, no heap for lines
// under 4 KiB) and copies it into a byte ring shared with the crash core (log_rings.c). A writer
// thread appends what the ring holds with one writev per batch (CappedFile: O_APPEND under an
// exclusive flock, making room before the batch so the file never passes its cap, and taking a
// short write back so no line is torn). Lines at or above `synchronousLevel` (error by default,
// the CocoaLumberjack policy) are written before `log(_:)` returns, after everything queued
// before them. When the ring is full the caller writes synchronously instead of dropping. A crash
// appends what is still queued (the handler writes the ring to the file), and normal exit flushes.
// Lines that cannot be written (a full disk) are counted in `droppedLines`, reported once per
// outage on stderr, and a line in the file says how many when writing works again.
import CFaultlineCrash
import FaultlineThreads
import Foundation
import Synchronization

public final class FileLogger: Logger, @unchecked Sendable {
    public struct Configuration: Sendable {
        public var path: String
        /// The cap, which the file never passes: a batch of lines that would take it past the cap
        /// first drops the file's older lines (it keeps at most half the cap, whole lines). At
        /// least `FileLogger.smallestCap`: a smaller cap makes `init` throw. Half of it is the
        /// longest line (a longer one is cut, with a marker).
        public var maximumBytes: Int = 2 * 1024 * 1024
        public var minimumLevel: LogLevel = .trace
        /// Lines at or above this level are on disk when `log(_:)` returns.
        public var synchronousLevel: LogLevel = .error
        /// Bytes of lines that may wait for the writer thread (at most the cap is used).
        public var queueBytes: Int = 256 * 1024
        public init(path: String) { self.path = path }
    }

    /// The smallest `maximumBytes` accepted (4096).
    public static let smallestCap = CappedFile.smallestCap

    public let configuration: Configuration
    /// Lines lost because writing failed (full disk, I/O error), since start.
    public var droppedLines: Int { state.withLock { $0.droppedTotal } }

    private struct State {
        var file: CappedFile
        var failing: Int32 = 0  // errno of the outage in progress, 0 when writing works
        var droppedInOutage = 0
        var droppedTotal = 0
        var closed = false
    }
    private let state: Mutex<State>
    private let ring: OpaquePointer
    private let pid = getpid()
    private let maxLine: Int
    /// The writer thread; its state is whether the drain after a stop request has run.
    private let writer = WorkerThread(name: "faultline.filelog", state: false)
    private let stopping = Atomic<Bool>(false)

    /// Opens (creating the file and its directory) and starts the writer thread. Throws when the
    /// file cannot be opened or `maximumBytes` is below `FileLogger.smallestCap`.
    public convenience init(path: String, maximumBytes: Int = 2 * 1024 * 1024, minimumLevel: LogLevel = .trace) throws {
        var c = Configuration(path: path)
        c.maximumBytes = maximumBytes
        c.minimumLevel = minimumLevel
        try self.init(c)
    }

    public init(_ configuration: Configuration) throws {
        self.configuration = configuration
        let file: CappedFile
        do { file = try CappedFile(path: configuration.path, cap: configuration.maximumBytes) } catch { throw error }
        maxLine = max(256, file.cap / 2)
        // A queue larger than the cap would only hold lines that cannot all stay.
        let queue = max(min(configuration.queueBytes, file.cap), maxLine + 1)
        guard let r = faultline_log_ring_create(queue, file.fd) else {
            throw CappedFile.OpenError(description: "cannot map the file log's queue")
        }
        ring = r
        file.onReopen = { fd in faultline_log_ring_set_fd(r, fd) }
        state = Mutex(State(file: file))
        Self.registerForExit(self)
        writer.start { [self] finalDrainDone, stopping in writerStep(&finalDrainDone, stopping) }
    }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= configuration.minimumLevel }

    public func log(_ event: LogEvent) {
        guard event.level >= configuration.minimumLevel else { return }
        let sync = event.level >= configuration.synchronousLevel
        LogLineFormat.withLine(event, pid: pid, maxBytes: maxLine) { line in
            if !sync && faultline_log_ring_append(ring, line.baseAddress, line.count) == 0 {
                writer.wakeIfSleeping()
                return
            }
            // Synchronous: what was queued first, then this line, before returning.
            state.withLock { s in
                drain(&s)
                write(&s, [line])
            }
        }
    }

    /// Writes everything queued so far before returning.
    public func flush() { state.withLock { drain(&$0) } }

    /// Flushes, stops the writer thread and closes the file. Later events are ignored.
    public func close() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        writer.stop()
        state.withLock { s in
            drain(&s)
            s.closed = true
            faultline_log_ring_set_fd(ring, -1)
        }
    }

    // MARK: writer

    /// Drains whenever the ring holds bytes, once more after a stop request, then ends.
    private func writerStep(_ finalDrainDone: inout Bool, _ stopping: Bool) -> WorkerThread<Bool>.Step {
        if finalDrainDone { return .exit }
        if faultline_log_ring_pending(ring) == 0 && !stopping {
            // Timed: a wake-up lost to the race between the sleeping flag and the ring costs 50 ms, not a line.
            return .wait(until: Date(timeIntervalSinceNow: 0.05))
        }
        finalDrainDone = stopping
        return .run { [self] in state.withLock { drain(&$0) } }
    }

    /// Writes what the ring holds. Caller holds the state lock.
    private func drain(_ s: inout State) {
        var a: UnsafeRawPointer?, b: UnsafeRawPointer?
        var na = 0, nb = 0
        let pending = faultline_log_ring_peek(ring, &a, &na, &b, &nb)
        guard pending > 0 else { return }
        write(&s, [UnsafeRawBufferPointer(start: a, count: na), UnsafeRawBufferPointer(start: b, count: nb)])
        faultline_log_ring_consume(ring, pending)
    }

    private func write(_ s: inout State, _ spans: [UnsafeRawBufferPointer]) {
        guard !s.closed else { return }
        let error = s.file.append(spans)
        if error == 0 {
            if s.failing != 0 { recovered(&s) }
            return
        }
        let lines = spans.reduce(0) { n, span in n + span.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } }
        s.droppedInOutage += lines
        s.droppedTotal += lines
        if s.failing == 0 {
            s.failing = error
            // Reported once per outage; the next success writes a line saying how much was lost.
            let text =
                "faultline: cannot write the file log \(configuration.path): \(String(cString: strerror(error))); lines are dropped until writing works again\n"
            _ = text.utf8CString.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count - 1) }
        }
    }

    private func recovered(_ s: inout State) {
        let note = LogEvent(
            level: .warning, message: "\(s.droppedInOutage) log lines were dropped: \(String(cString: strerror(s.failing)))",
            attributes: ["faultline.dropped_lines": .int(s.droppedInOutage)])
        // The line that worked may have taken the last free bytes: the outage only ends once its
        // note is in the file, so a note that cannot be written is tried again after the next line.
        let error = LogLineFormat.withLine(note, pid: pid, maxBytes: maxLine) { line in s.file.append([line]) }
        if error == 0 {
            s.failing = 0
            s.droppedInOutage = 0
        }
    }

    // MARK: exit

    private static let live = Mutex<[Weak]>([])
    private struct Weak { weak var logger: FileLogger? }
    private static func registerForExit(_ l: FileLogger) {
        let first = live.withLock { list in
            list.append(Weak(logger: l))
            return list.count == 1
        }
        if first { atexit { FileLogger.flushAll() } }
    }
    /// Flushes every open file log (normal exit; a crash is handled by the crash core).
    static func flushAll() {
        for w in live.withLock({ $0 }) { w.logger?.flush() }
    }
}
