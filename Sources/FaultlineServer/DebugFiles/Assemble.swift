// `POST /api/0/projects/<org>/<project>/files/difs/assemble/`: joins uploaded chunks into a file,
// checks its SHA-1, parses it as ELF, stores it by build-id and starts the backfill.
// States follow sentry-cli: not_found (+ missingChunks) → created → assembling → ok | error. The
// request only checks and queues: joining, hashing and parsing (seconds for a large file) run on
// this node's assembly workers, never on an HTTP thread, and the client polls, as sentry-cli and
// `faultline upload` do. One node assembles a given file at a time cluster-wide (a store claim
// named after its checksum, renewed while the work runs); a poll that reaches another node is told
// `assembling`, and if the assembling node dies its claim lapses and the next poll starts over.
import Foundation
import FaultlineProtocol
import FaultlineHashing
import FaultlineSymbolication
import FaultlineThreads
import Synchronization

public final class Assembler: Sendable {
    let store: any Store
    let records: any DebugFileRecordStore
    let chunks: ChunkUpload
    let debugFiles: DebugFileStore
    let onNewDebugFile: @Sendable (ELFSummary) -> Void
    /// Where a source bundle's files go (nil: bundles are refused).
    let sources: SourceFiles?
    private struct Known {
        /// This process's assemblies that failed (successes are in the store), with when: told to
        /// polling clients for `failureMemory` seconds, after which a request assembles again (the
        /// chunks stay until they expire), so a full disk freed since is not an error for good.
        var failures: [String: (message: String, at: Double)] = [:]
        /// Assemblies queued or running on this node, by checksum (true: running).
        var jobs: [String: Bool] = [:]
    }
    private let known = Mutex(Known())
    private struct Job { let checksum: String; let chunkList: [String]; let name: String }
    /// Assembly is disk-bound: two workers keep a small upload from waiting behind a large one.
    private let workers = WorkerPool<Job>(name: "faultline-assemble", workers: 2)
    /// This node's name on assembly claims.
    let holder = "\(UUID().uuidString):\(ProcessInfo.processInfo.processIdentifier):assemble"
    /// How long an assembly claim lasts unless renewed (renewed every third of it while working).
    let lease: Double = 30

    public init(
        stores: Stores, chunks: ChunkUpload, debugFiles: DebugFileStore, sources: SourceFiles? = nil,
        onNewDebugFile: @escaping @Sendable (ELFSummary) -> Void
    ) {
        self.store = stores.core
        self.records = stores.debugFiles
        self.chunks = chunks
        self.debugFiles = debugFiles
        self.sources = sources
        self.onNewDebugFile = onNewDebugFile
    }

    /// Starts the assembly workers.
    public func start() {
        workers.start(
            prepare: {
                // Below the HTTP threads (nice 10): on a busy machine ingest gets the CPU first and a
                // large assembly takes longer, not the other way round. On Linux the nice value is a
                // thread's, and `who` 0 is the calling thread (setpriority(2), BUGS).
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            },
            run: { [unowned self] job in run(job) })
    }

    /// Lets running assemblies finish; queued ones are dropped (their claims released, their
    /// chunks kept), so the client's next poll queues them again, here after a restart or elsewhere.
    public func stop() {
        for j in workers.stop() { finished(j.checksum) }
    }

    /// Runs on an assembly worker, holding the file's claim renewed while it works.
    private func run(_ job: Job) {
        known.withLock { $0.jobs[job.checksum] = true }
        let claim = "assemble:\(job.checksum)"
        let (store, holder, lease) = (self.store, self.holder, self.lease)
        let beat = LeaseHeartbeat(lease: lease) { try store.renewClaim(claim, holder: holder, duration: lease) }
        finish(job)
        beat.cancel()
        finished(job.checksum)
    }

    /// The job is over on this node: forget it, give its claim up.
    private func finished(_ checksum: String) {
        known.withLock { _ = $0.jobs.removeValue(forKey: checksum) }
        try? store.releaseClaim("assemble:\(checksum)", holder: holder)
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        let body: JSONValue
        do { body = try JSONParser.parse(request.body) } catch { return .detail(400, "assemble request is not JSON: \(error)") }
        guard let files = body.objectValue else { return .detail(400, "assemble request must be an object keyed by file checksum") }
        guard files.count <= 1000 else { return .detail(400, "at most 1000 files per assemble request") }
        var out: [String: JSONValue] = [:]
        for (checksum, spec) in files {
            out[checksum] = assemble(checksum: checksum.lowercased(), spec: spec)
        }
        return .json(.object(out))
    }

    func state(_ s: String, missing: [String] = [], detail: String? = nil, dif: JSONValue? = nil) -> JSONValue {
        [
            "state": .string(s), "missingChunks": .array(missing.map { .string($0) }),
            "detail": detail.map { .string($0) } ?? .null, "dif": dif ?? .null
        ]
    }

    func assemble(checksum: String, spec: JSONValue) -> JSONValue {
        guard ChunkUpload.isSHA1(checksum) else { return state("error", detail: "file checksum must be 40 hex digits") }
        let chunkList = (spec["chunks"]?.arrayValue ?? []).compactMap { $0.stringValue?.lowercased() }
        let name = spec["name"]?.stringValue ?? ""
        // This node's job is read before the store: a job that finishes in between has recorded
        // the file by then, so the store check below sees it (read after, a finished job would
        // look like missing chunks, which it removed).
        let failure = Self.failureKey(checksum, chunkList)
        let now = Date().timeIntervalSince1970
        let (running, failed) = known.withLock { k in
            (k.jobs[checksum], k.failures[failure].flatMap { now - $0.at < Self.failureMemory ? $0.message : nil })
        }
        // "Already here" only if the file really is on disk: a file lost since (power loss
        // before its directory reached the disk, an operator's rm) is asked for again.
        if let id = try? records.uploadedBuildID(checksum: checksum), let record = try? records.debugFile(buildID: id),
            FileManager.default.fileExists(atPath: debugFiles.debugInfoPath(id)) || FileManager.default.fileExists(atPath: debugFiles.executablePath(id))
        {
            return state("ok", dif: dif(record, name: name))
        }
        if let running { return state(running ? "assembling" : "created") }
        if let failed { return state("error", detail: failed) }
        guard !chunkList.isEmpty else { return state("not_found") }
        guard chunkList.allSatisfy(ChunkUpload.isSHA1) else { return state("error", detail: "chunk names must be SHA-1 hex") }
        let missing = chunkList.filter { !chunks.has($0) }
        if !missing.isEmpty { return state("not_found", missing: missing) }

        // One node assembles a file at a time; this one takes it unless another node already does.
        do {
            guard try store.acquireClaim("assemble:\(checksum)", holder: holder, duration: lease) else { return state("assembling") }
        } catch {
            return state("error", detail: "could not reach the store: \(error)")
        }
        let queued = known.withLock { k in
            defer { if k.jobs[checksum] == nil { k.jobs[checksum] = false } }
            return k.jobs[checksum] != nil
        }
        if queued { return state("assembling") }
        guard workers.submit(Job(checksum: checksum, chunkList: chunkList, name: name)) else {
            finished(checksum)  // stopping: the next poll, here after a restart or elsewhere, queues it again
            return state("assembling")
        }
        return state("created")
    }

    /// Runs on an assembly worker: builds, installs and records the file, or remembers why not.
    private func finish(_ job: Job) {
        let (checksum, chunkList, name) = (job.checksum, job.chunkList, job.name)
        switch build(checksum: checksum, chunkList: chunkList) {
        case .damagedChunks:
            return  // removed: the next poll reports them missing and the client sends them again
        case .failure(let message):
            // The chunks stay until they expire (ChunkUpload.expire): another upload in progress
            // may share one, and a failed (or hostile) assembly must not take it from under it.
            known.withLock { k in
                if k.failures.count >= 10_000 { k.failures.removeAll() }  // bounded: only a hint for polling clients
                k.failures[Self.failureKey(checksum, chunkList)] = (message, Date().timeIntervalSince1970)
            }
        case .sources(let buildID):
            // A source bundle: its sources are stored; `ok` like any assembled file.
            do {
                try records.recordUpload(checksum: checksum, buildID: buildID)
                chunks.remove(chunkList)
            } catch {
                known.withLock {
                    $0.failures[Self.failureKey(checksum, chunkList)] = ("could not record the source bundle: \(error)", Date().timeIntervalSince1970)
                }
            }
        case .kept(let summary):
            // Answered `ok` like any assembled file: the build-id's debug file is on the server.
            do {
                try records.recordUpload(checksum: checksum, buildID: summary.buildID)
                chunks.remove(chunkList)
            } catch {
                known.withLock {
                    $0.failures[Self.failureKey(checksum, chunkList)] = ("could not record the debug file: \(error)", Date().timeIntervalSince1970)
                }
            }
        case .success(let summary):
            let record = DebugFileRecord(
                buildID: summary.buildID, hasDebugInfo: summary.hasDebugInfo, hasSymbols: summary.hasSymbols,
                isExecutable: summary.isExecutable, size: 0, name: Self.displayName(name), uploaded: Date().timeIntervalSince1970)
            do {
                var r = record
                r.size = Int64(
                    (try? FileManager.default.attributesOfItem(atPath: debugFiles.debugInfoPath(summary.buildID))[.size] as? Int)
                        ?? (try? FileManager.default.attributesOfItem(atPath: debugFiles.executablePath(summary.buildID))[.size] as? Int) ?? 0)
                try records.recordDebugFile(r)
                // The backfill is queued before the upload is recorded, which is what makes polls
                // answer `ok`: a client that then asks for the status never sees "no backfill".
                onNewDebugFile(summary)
                try records.recordUpload(checksum: checksum, buildID: summary.buildID)
                chunks.remove(chunkList)
            } catch {
                let message = "could not record the debug file: \(error)"
                known.withLock { $0.failures[Self.failureKey(checksum, chunkList)] = (message, Date().timeIntervalSince1970) }
            }
        }
    }

    /// `kept`: a valid file whose build-id the store holds as rich a file for already; the stored
    /// one stays (`DebugFileStore.install`), so nothing is re-symbolicated.
    /// What a failure is remembered by: the checksum and the chunks named for it, so a wrong chunk
    /// list (a client's mistake, or someone else's on purpose) never fails the right one.
    static func failureKey(_ checksum: String, _ chunks: [String]) -> String { checksum + ":" + chunks.joined(separator: ",") }

    /// How long a failed assembly is answered `error` before a request tries it again.
    static let failureMemory: Double = 60

    enum Built { case success(ELFSummary), kept(ELFSummary), sources(BuildID), failure(String), damagedChunks([String]) }

    private func build(checksum: String, chunkList: [String]) -> Built {
        let tmp = debugFiles.temporaryPath()
        guard FileManager.default.createFile(atPath: tmp, contents: nil), let fh = FileHandle(forWritingAtPath: tmp) else {
            return .failure("could not create a temporary file")
        }
        let hasher = SHA1Hash.Hasher()
        var total: Int64 = 0
        var damaged: [String] = []
        for c in chunkList {
            guard let data = chunks.read(c) else { try? fh.close(); try? FileManager.default.removeItem(atPath: tmp); return .failure("chunk \(c) vanished") }
            // A chunk cut short on disk (a crash before it reached the disk) no longer matches its
            // name: drop it and ask the client for it again instead of failing this file forever.
            let chunkHasher = SHA1Hash.Hasher()
            chunkHasher.update(data)
            if chunkHasher.finalizeHex() != c { damaged.append(c); continue }
            total += Int64(data.count)
            if total > ChunkUpload.maxFileSize {
                try? fh.close(); try? FileManager.default.removeItem(atPath: tmp); return .failure("file exceeds \(ChunkUpload.maxFileSize) bytes")
            }
            hasher.update(data)
            // The throwing write: the old `write(_:)` traps on an error (a full disk), which here
            // would stop the server on an assembly worker.
            do { try fh.write(contentsOf: data) } catch {
                try? fh.close(); try? FileManager.default.removeItem(atPath: tmp)
                return .failure("could not write the assembled file: \(error)")
            }
        }
        do { try fh.synchronize(); try fh.close() } catch {
            try? fh.close(); try? FileManager.default.removeItem(atPath: tmp)
            return .failure("could not write the assembled file to disk: \(error)")
        }
        if !damaged.isEmpty {
            try? FileManager.default.removeItem(atPath: tmp)
            chunks.remove(damaged)
            return .damagedChunks(damaged)
        }
        let actual = hasher.finalizeHex()
        guard actual == checksum else {
            try? FileManager.default.removeItem(atPath: tmp)
            return .failure("assembled file has SHA-1 \(actual), not \(checksum)")
        }
        if SourceBundle.isBundle(path: tmp) {
            defer { try? FileManager.default.removeItem(atPath: tmp) }
            guard let sources else { return .failure("this server keeps no source files") }
            do {
                return .sources(try sources.storeBundle(at: tmp))
            } catch {
                return .failure("source bundle: \(error)")
            }
        }
        let summary: ELFSummary
        do { summary = try ELFSummary.read(path: tmp) } catch {
            try? FileManager.default.removeItem(atPath: tmp)
            return .failure(error.description)
        }
        guard summary.hasDebugInfo || summary.hasSymbols || summary.isExecutable else {
            try? FileManager.default.removeItem(atPath: tmp)
            return .failure("the ELF file has neither debug info, symbols nor code")
        }
        do {
            guard try debugFiles.install(tmp, summary: summary) else { return .kept(summary) }
        } catch {
            try? FileManager.default.removeItem(atPath: tmp)
            return .failure("could not store the debug file: \(error)")
        }
        return .success(summary)
    }

    /// The client's name is kept only for display: last path component, printable, bounded.
    static func displayName(_ name: String) -> String {
        let last = (name as NSString).lastPathComponent
        return String(last.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7f }.prefix(200).map(Character.init))
    }

    func dif(_ r: DebugFileRecord, name: String) -> JSONValue {
        // The architecture is the stored file's own (its ELF header), read when the client is told.
        let stored = [debugFiles.debugInfoPath(r.buildID), debugFiles.executablePath(r.buildID)].lazy.compactMap { try? ELFInfo.read(path: $0) }.first
        var features: [JSONValue] = []
        if r.hasDebugInfo { features.append("debug") }
        if r.hasSymbols { features.append("symtab") }
        if r.isExecutable { features.append("unwind") }
        return [
            "id": .string(r.buildID.hex), "uuid": .string(r.buildID.debugID.description),
            "debugId": .string(r.buildID.debugID.description), "codeId": .string(r.buildID.hex),
            "objectName": .string(r.name.isEmpty ? Self.displayName(name) : r.name), "cpuName": .string(stored?.architecture?.sentryName ?? "unknown"),
            "symbolType": "elf", "headers": [:], "size": .int(r.size), "sha1": "", "dateCreated": "",
            // symbolic's ObjectKind names: "dbg" for a debug companion, "exe" for a file with code.
            "data": ["type": r.isExecutable ? "exe" : "dbg", "features": .array(features)]
        ]
    }
}
