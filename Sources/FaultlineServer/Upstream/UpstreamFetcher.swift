// Debug files from upstream debuginfod servers (`serve --debuginfod-upstream URL…`): when a frame
// names a build-id the server has no debug file for, the build-id is queued here; one worker
// thread asks the upstreams through libdebuginfod (bounded timeouts), stores a file it gets
// exactly like an upload (DebugFileStore + a DebugFileRecord) and starts the same backfill.
// Ingest only ever appends to a bounded queue: a slow or dead upstream delays nothing but this
// worker. "Not found" and "could not ask" are remembered per build-id for `retryInterval`.
// Any client can name any build-id in a frame, and an upstream may hold large real files: so the
// worker asks at most `queriesPerWindow` times and downloads at most `bytesPerWindow` per window
// (then what is queued waits for the next window), and takes no file over `maxFileBytes`.
import FaultlineThreads
import Foundation
import FaultlineProtocol
import FaultlineSymbolication
import Synchronization

public final class UpstreamFetcher: @unchecked Sendable {
    public struct Options: Sendable {
        public var urls: [String]
        /// How long a negative answer (not found, or no upstream answered) stands before asking again.
        public var retryInterval: TimeInterval = 3600
        /// Seconds without progress before an upstream is given up.
        public var timeoutSeconds: Int = 10
        /// Seconds one download may take at most.
        public var maxTimeSeconds: Int = 300
        /// Build-ids waiting at most; more are dropped (and asked for at a later frame).
        public var queueLimit: Int = 10_000
        /// Upstream queries per window; past it the queue waits for the next window.
        public var queriesPerWindow = 240
        /// Bytes downloaded per window; past it the queue waits for the next window.
        public var bytesPerWindow: Int64 = 4 << 30
        public var window: TimeInterval = 3600
        /// A larger file is refused by the library before it is downloaded (EFBIG).
        public var maxFileBytes: Int64 = 1 << 30
        public init(urls: [String]) { self.urls = urls }
    }

    public enum State: Equatable, Sendable {
        case queued
        case fetched
        /// Negative answer, asked again after `retryAt`.
        case notFound(retryAt: Date)
        case failed(errno: Int32, retryAt: Date)
    }

    let options: Options
    let client: DebuginfodClient
    let records: any DebugFileRecordStore
    let debugFiles: DebugFileStore
    /// Set by the server: starts the backfill of a new file (the upload path's callback).
    var onNewDebugFile: (@Sendable (ELFSummary) -> Void)?

    private struct Queue {
        var ids: [BuildID] = []
        var states: [BuildID: State] = [:]
        var running = false
        var queries = 0
        var windowStart = Date.distantPast
        var windowQueries = 0
        var windowBytes: Int64 = 0
        /// Set with the stop request: nothing is queued after it.
        var stopped = false
    }
    private let worker = WorkerThread(name: "faultline-debuginfod-upstream", state: Queue())
    /// Held while a fetched file is stored, so `stop` never closes the store under it.
    private let installing = Mutex<Void>(())

    /// Number of upstream queries made (tests: a cached negative answer makes none).
    public var queryCount: Int { worker.read { $0.queries } }

    public init(options: Options, dataDirectory: String, records: any DebugFileRecordStore, debugFiles: DebugFileStore) {
        self.options = options
        self.records = records
        self.debugFiles = debugFiles
        client = DebuginfodClient(
            urls: options.urls, cacheDirectory: dataDirectory + "/debuginfod-cache",
            timeoutSeconds: options.timeoutSeconds, maxTimeSeconds: options.maxTimeSeconds,
            negativeRetrySeconds: Int(options.retryInterval.rounded(.up)), maxFileBytes: options.maxFileBytes)
    }

    /// A frame needs `id` and the server has no file: queue it unless it is queued, was fetched,
    /// or has a negative answer younger than the retry interval. Never blocks on the network.
    public func want(_ id: BuildID) {
        worker.update { q in
            switch q.states[id] {
            case .queued?, .fetched?: return
            case .notFound(let at)?, .failed(_, let at)?: if Date() < at { return }
            case nil: break
            }
            guard q.ids.count < options.queueLimit, !q.stopped else { return }
            q.states[id] = .queued
            q.ids.append(id)
        }
    }

    public func state(of id: BuildID) -> State? { worker.read { $0.states[id] } }

    /// Whether the worker has nothing queued and is not asking anyone now.
    public var isIdle: Bool { worker.read { $0.ids.isEmpty && !$0.running } }

    public func start() {
        worker.start { [self] q, stopping in
            if stopping { return .exit }
            guard !q.ids.isEmpty else { return .wait(until: nil) }
            let now = Date()
            if now >= q.windowStart.addingTimeInterval(options.window) { (q.windowStart, q.windowQueries, q.windowBytes) = (now, 0, 0) }
            if q.windowQueries >= options.queriesPerWindow || q.windowBytes >= options.bytesPerWindow {
                return .wait(until: q.windowStart.addingTimeInterval(options.window))
            }
            let id = q.ids.removeFirst()
            q.running = true
            q.queries += 1
            q.windowQueries += 1
            return .run { [self] in fetch(id) }
        }
    }

    /// Returns at once even while a query waits on a slow upstream: the worker stores nothing
    /// after this (it checks `stopping` inside `installing` before touching the store).
    public func stop() {
        worker.requestStop { q in
            q.stopped = true; q.ids.removeAll()
        }
        installing.withLock { _ in }
    }

    private func fetch(_ id: BuildID) {
        // Queued means our retry interval allows asking: the library's own memory of a "not
        // found" must not answer for the upstream.
        client.forgetNegativeAnswer(for: id)
        let answer = client.debugInfo(id)
        var next: State
        var downloaded: Int64 = 0
        switch answer {
        case .found(let path):
            downloaded = ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.int64Value ?? 0
            next = install(id, from: path)
        case .notFound: next = .notFound(retryAt: Date().addingTimeInterval(options.retryInterval))
        case .failed(let e): next = .failed(errno: e, retryAt: Date().addingTimeInterval(options.retryInterval))
        }
        worker.update { q in
            q.states[id] = next; q.running = false; q.windowBytes += downloaded
        }
    }

    /// Moves the fetched file out of libdebuginfod's cache into the debug-file store, records it
    /// and starts the backfill, as the assemble endpoint does for an upload.
    private func install(_ id: BuildID, from cached: String) -> State {
        installing.withLock { _ in installAlone(id, from: cached) }
    }

    private func installAlone(_ id: BuildID, from cached: String) -> State {
        let negative = State.failed(errno: EINVAL, retryAt: Date().addingTimeInterval(options.retryInterval))
        if worker.isStopping { return negative }
        let staged = debugFiles.temporaryPath()
        do {
            if rename(cached, staged) != 0 { try FileManager.default.copyItem(atPath: cached, toPath: staged) }
        } catch { return negative }
        chmod(staged, 0o644)
        // The upstream must not hand us another build's file.
        guard let summary = try? ELFSummary.read(path: staged), summary.buildID == id, summary.hasDebugInfo || summary.hasSymbols else {
            unlink(staged); return negative
        }
        do { try debugFiles.install(staged, summary: summary) } catch { unlink(staged); return negative }
        let size = (try? FileManager.default.attributesOfItem(atPath: debugFiles.debugInfoPath(id))[.size] as? Int) ?? 0
        let record = DebugFileRecord(
            buildID: id, hasDebugInfo: summary.hasDebugInfo, hasSymbols: summary.hasSymbols,
            isExecutable: summary.isExecutable, size: Int64(size), name: "debuginfod",
            uploaded: Date().timeIntervalSince1970)
        do { try records.recordDebugFile(record) } catch { return negative }
        onNewDebugFile?(summary)
        return .fetched
    }
}
