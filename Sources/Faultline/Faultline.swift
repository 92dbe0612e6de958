// `import Faultline`: start once early in main; crashes, logs and errors flow from there.
import FaultlineCrashPickup
import Foundation
import FaultlineProtocol
import Synchronization

/// The SDK's entry points. Nothing here throws into the app or crashes it: problems are
/// reported once on stderr and in `StartResult`.
public enum Faultline {
    public static let sdkName = "faultline.swift"

    /// What `start` did.
    public struct StartResult: Sendable {
        public var crashHandlerInstalled = false
        public var sending = false
        public var dataDirectory = ""
        public var sessionID = ""
        public var installID = ""
        /// Problems that left part of the SDK off; the app keeps running regardless. Includes what
        /// start's background half found (an unusable outbox, corrupt crash reports): reading this
        /// waits for that half to finish (up to 10 s; usually a few milliseconds after start).
        public var warnings: [String] { startWarnings + (preparation?.result(timeout: 10)?.warnings ?? []) }
        /// Time `faultline_crash_start` took on the calling thread (installing the handler; its
        /// unwinder pre-warm and module scan run on its background thread).
        public var crashHandlerStartNanoseconds: UInt64 = 0
        /// Crash reports of earlier runs turned into events by this start's background half;
        /// reading this waits for it, like `warnings`.
        public var pickup: CrashPickup { preparation?.result(timeout: 10)?.pickup ?? CrashPickup() }

        var startWarnings: [String] = []
        var preparation: StartPreparation?
    }

    /// Starts crash capture and (with a valid DSN) sending. Once per process: a later call prints
    /// one line on stderr, changes nothing, and returns the first call's result (with that line
    /// added to its warnings). A start that left the SDK off (an unusable data directory) does
    /// not count: the next call starts.
    /// - A missing DSN: crashes are still captured and converted into the outbox, nothing is sent.
    /// - A malformed DSN, or one carrying a server token: the same as no DSN (crashes captured
    ///   to disk, nothing sent), with one line on stderr saying why.
    ///
    /// On the calling thread: the DSN, a check of the data directory (usable, or can be made),
    /// the install id, the crash context and the crash handler. Everything else (making missing
    /// directories, outbox scan, pickup of earlier crash reports, network set-up, the worker)
    /// runs on the crash core's background thread right after; whatever needs it waits for it
    /// (StartPreparation).
    @discardableResult
    public static func start(_ options: Options) -> StartResult {
        if case .again(let first) = SDKState.shared.claimStart() {
            let note = "Faultline.start was called again; ignored: the first start's options stay in use"
            warnOnce(note)
            var again = first ?? StartResult()
            again.startWarnings.append(note)
            return again
        }
        var result = StartResult()
        var dsn: DSN?
        if let raw = options.dsn, !DSN.isBlank(raw) {
            do { dsn = try DSN(parsing: raw) } catch {
                result.startWarnings.append("nothing is sent, crashes are captured to disk: \(error.description)")
                warnOnce(result.startWarnings.last!)
            }
        } else {
            result.startWarnings.append("no DSN given: crashes are captured to disk but nothing is sent")
        }

        let data = DataDirectory(root: options.resolvedDataDirectory)
        result.dataDirectory = data.root
        let rootExists: Bool
        do {
            rootExists = try data.rootExists()
            if !rootExists && options.captureStderr && options.stderrFile == nil { try data.createRoot() }  // the stderr file is in it
        } catch {
            result.startWarnings.append("Faultline is off: cannot use data directory \(data.root): \(error)")
            warnOnce(result.startWarnings.last!)
            SDKState.shared.abandonStart()
            return result
        }
        let install = data.installID()
        result.installID = install.id
        if options.captureStderr {
            do { try StderrCapture.start(file: options.stderrFile ?? data.root + "/stderr.log", tailBytes: options.stderrTailBytes) } catch {
                result.startWarnings.append("stderr is not captured: \(error.description)")
                warnOnce(result.startWarnings.last!)
            }
        }
        let state = SDKState.shared
        result.sessionID = state.sessionID

        TraceSampler.rate = options.tracesSampleRate
        let context = ScopeContext(options: options, sessionID: state.sessionID, installID: install.id)
        let preparation = StartPreparation()
        result.preparation = preparation
        state.configure(options: options, dsn: dsn, context: context, dataDirectory: data, preparation: preparation)
        // Log lines from now on are kept for sending, before the worker exists.
        if dsn != nil { LogBuffer.shared.configure(enabled: true, level: options.sendLogsAtOrAbove) }
        ExitHooks.waitForStartAtExit()

        let background: @Sendable () -> Void = { [dsn] in
            if !rootExists { try? data.createRoot() }  // before anything goes into it (a failure: the outbox says why)
            if install.isNew { data.persistInstallID(install.id) }
            prepareInBackground(options: options, dsn: dsn, data: data, context: context, preparation: preparation)
        }
        if options.captureCrashes {
            // The context first: a crash the moment the handler is in carries it.
            CrashHandler.setContext(context.crashContextJSON())
            CrashHandler.setSession(id: context.sessionID, started: SessionTracker.iso(context.sessionStarted))
            do {
                let t0 = DispatchTime.now().uptimeNanoseconds
                defer { result.crashHandlerStartNanoseconds = DispatchTime.now().uptimeNanoseconds - t0 }
                try CrashHandler.start(crashDirectory: data.crashes, then: background)
                result.crashHandlerInstalled = true
            } catch {
                result.startWarnings.append("crash handler not installed: \(error.description)")
                warnOnce(result.startWarnings.last!)
            }
        }
        if !result.crashHandlerInstalled { Thread.detachNewThread(background) }
        result.sending = dsn != nil
        state.finishStart(result)
        return result
    }

    /// Start's background half (the crash core's preparation thread, or a thread of its own when
    /// crashes are not captured): outbox, pickup of earlier crash reports, then sending.
    private static func prepareInBackground(
        options: Options, dsn: DSN?, data: DataDirectory, context: ScopeContext,
        preparation: StartPreparation
    ) {
        var warnings: [String] = []
        let state = SDKState.shared
        let outbox: Outbox
        do {
            try data.create()
            outbox = try state.outbox(directory: data.outbox, byteCap: options.queueByteCap)
        } catch {
            warnings.append("crashes are captured to disk but neither converted nor sent: cannot use outbox \(data.outbox): \(error)")
            warnOnce(warnings.last!)
            preparation.finish(pickup: CrashPickup(), warnings: warnings)
            return
        }
        preparation.settleOutbox()

        // Reports of earlier runs; never this process's own (a crash in the meantime is being
        // written by this process's handler, and the next launch converts it).
        let header: (String) -> JSONValue = { eventID in envelopeHeader(eventID: eventID, dsn: dsn) }
        var pickup = PendingCrashReports.convert(
            crashDirectory: data.crashes, corruptDirectory: data.corruptCrashes,
            outbox: outbox, sdkName: sdkName, envelopeHeader: header,
            skipping: CrashHandler.isStarted ? CrashHandler.nextCrashEventID : nil)
        if let dir = options.swiftBacktraceDirectory {
            pickup.merge(
                PendingSwiftBacktraceLogs.convert(
                    directory: dir, corruptDirectory: data.corruptCrashes, outbox: outbox,
                    context: pickupContext(options, installID: context.installID),
                    sdkName: sdkName, envelopeHeader: header))
        }
        if !pickup.setAside.isEmpty {
            warnings.append("\(pickup.setAside.count) corrupt crash report(s) moved to \(data.corruptCrashes)")
        }
        if let dsn {
            let headers = [HeaderName.installID: context.installID].merging(options.appID.map { [HeaderName.appID: $0] } ?? [:]) { a, _ in a }
            state.startSending(
                dsn: dsn, outbox: outbox, headers: headers, options: options, context: context,
                markerDirectory: data.root + "/sessions", crashedSessions: pickup.previousSessionCrashed)
        }
        preparation.finish(pickup: pickup, warnings: warnings)
    }

    /// Sends everything queued before the call and waits up to `timeout` seconds. True only when
    /// the server acknowledged all of it: false when not started (or no DSN), on a timeout, when
    /// anything queued before the call is still in the outbox (server down, back-off, rate
    /// limit), when the server refused some of it (a wrong key: see `status`), or when anything
    /// was lost since the previous flush (a burst of logs over the outbox's cap: `status` says
    /// what). What is left stays in the outbox for later passes: `status.pendingEnvelopes`.
    @discardableResult
    public static func flush(timeout: Double = 5) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        SDKState.shared.waitForStart(timeout: timeout)
        guard let w = Worker.shared, let outbox = SDKState.shared.currentOutbox else { return false }
        // Losses counted from the previous flush's end: packing the lines logged meanwhile (here or
        // on the worker's own passes) may have evicted some of them.
        let lostBefore = flushedLosses.load(ordering: .relaxed)
        TransactionSender.shared.drain()  // ended transactions into the outbox first
        w.packLogs()  // and the log lines logged so far
        let queued = Set(outbox.pending().map(\.path))
        let sent = w.flush(timeout: max(0, deadline.timeIntervalSinceNow))
        let lost = envelopeLosses(outbox)
        flushedLosses.store(lost, ordering: .relaxed)
        guard sent else { return false }
        let left = outbox.pending().contains { queued.contains($0.path) }
        return !left && lost == lostBefore
    }

    /// Envelope losses as the last flush left them (what the next flush compares with).
    private static let flushedLosses = Atomic<Int>(0)

    /// Envelopes lost so far (archives evicted by the rolling log's caps are not envelopes).
    private static func envelopeLosses(_ outbox: Outbox) -> Int {
        outbox.droppedCounts.filter { $0.key != .logArchiveEvicted }.values.reduce(0, +)
    }

    /// Ends the session as exited and flushes; called at normal exit and on SIGTERM.
    public static func close(timeout: Double = 2) {
        // A forked child inherits this hook but not the worker thread, nor the parent's session.
        guard !SDKState.shared.isForkedChild else { return }
        SDKState.shared.waitForStart(timeout: timeout)
        guard let w = Worker.shared, let outbox = SDKState.shared.currentOutbox else { return }
        w.waitUntilSetUp(timeout: timeout)  // a very short run must not end before its session began
        TransactionSender.shared.drain()
        if let end = SessionTracker.shared.end() {
            outbox.enqueue(Envelope(header: envelopeHeader(eventID: nil, dsn: SDKState.shared.dsn), items: [end]))
        }
        w.flush(timeout: timeout, final: true)
        // What did not go out stays in the outbox for the next launch.
        w.stopAndWait(timeout: 1)
    }

    /// Envelopes dropped since start, by reason (queue overflow, disk failure, server rejection…).
    public static var droppedCounts: [DropReason: Int] { SDKState.shared.currentOutbox?.droppedCounts ?? [:] }

    /// The outbox, once started (for tools and tests that inspect what would be sent).
    public static var outbox: Outbox? { SDKState.shared.currentOutbox }

    static func envelopeHeader(eventID: String?, dsn: DSN?) -> JSONValue {
        var h: [String: JSONValue] = ["sdk": ["name": .string(sdkName), "version": .string(FaultlineVersion.string)]]
        if let e = eventID { h["event_id"] = .string(e) }
        if let d = dsn { h["dsn"] = .string(d.description) }
        return .object(h)
    }

    private static let warned = Mutex<Set<String>>([])
    static func warnOnce(_ message: String) {
        let first = warned.withLock { $0.insert(message).inserted }
        if first { FileHandle.standardError.write(Data(("faultline: " + message + "\n").utf8)) }
    }
}

/// Process-wide SDK state. One instance; everything mutable sits behind its mutex.
final class SDKState: Sendable {
    static let shared = SDKState()
    let sessionID = newEventID()
    let startedPID = getpid()
    /// A child forked from the process that started: it inherits the SDK's memory but not its
    /// worker thread, nor the parent's session (its errors and crashes end none; the crash core
    /// forgets the session in its own after-fork hook).
    var isForkedChild: Bool { getpid() != startedPID }

    private struct Inner {
        var outbox: Outbox?
        var options: Options?
        var dsn: DSN?
        var context: ScopeContext?
        var dataDirectory: DataDirectory?
        var workerStarted = false
        var preparation: StartPreparation?
        var start = StartClaim.none
    }
    private let inner = Mutex(Inner())

    enum StartClaim {
        case none
        case inProgress
        case done(Faultline.StartResult)
    }
    enum StartTurn {
        case first
        /// Started already: the first start's result (nil while it is still running).
        case again(Faultline.StartResult?)
    }

    /// The first caller starts; decided under the lock, so two racing starts cannot both run.
    func claimStart() -> StartTurn {
        inner.withLock { s in
            switch s.start {
            case .none:
                s.start = .inProgress
                return .first
            case .inProgress: return .again(nil)
            case .done(let r): return .again(r)
            }
        }
    }
    /// The start left the SDK off: a later start may try again.
    func abandonStart() { inner.withLock { $0.start = .none } }
    func finishStart(_ result: Faultline.StartResult) { inner.withLock { $0.start = .done(result) } }
    /// A start ran (or runs) and left the SDK on.
    var isStarted: Bool {
        inner.withLock { s in
            if case .none = s.start { return false }
            return true
        }
    }

    /// Waits (bounded) until the latest start's background half has run.
    func waitForStart(timeout: Double) {
        _ = inner.withLock { $0.preparation }?.result(timeout: timeout)
    }

    func outbox(directory: String, byteCap: Int) throws -> Outbox {
        try inner.withLock { s in
            if let o = s.outbox, o.directory == directory { return o }
            let o = try Outbox(directory: directory, byteCap: byteCap)
            s.outbox = o
            return o
        }
    }
    /// The outbox; right after start, once start's background half has made it.
    var currentOutbox: Outbox? {
        inner.withLock { $0.preparation }?.waitForOutbox(timeout: 5)
        return inner.withLock { $0.outbox }
    }
    var dsn: DSN? { inner.withLock { $0.dsn } }
    var context: ScopeContext? { inner.withLock { $0.context } }
    var options: Options? { inner.withLock { $0.options } }

    /// Starts the worker once. Later starts change the log level and the crash context; the DSN,
    /// headers and outbox of the first start stay in use for the life of the process.
    func startSending(
        dsn: DSN, outbox: Outbox, headers: [String: String], options: Options, context: ScopeContext,
        markerDirectory: String, crashedSessions: [String]
    ) {
        // One worker per process, decided under the lock so two racing starts cannot make two.
        let first = inner.withLock { s -> Bool in
            if s.workerStarted { return false }
            s.workerStarted = true
            return true
        }
        guard first else { return }
        // This runs on start's background thread (Faultline.prepareInBackground), not the app's.
        let transport = HTTPTransport(dsn: dsn, extraHeaders: headers)
        // libcurl's global init (CurlClient.libraryReady), with OpenSSL set up first without its
        // atexit clean-up (CryptoLibrary): an exit while this thread is still here can no longer
        // tear OpenSSL down under it. An exit that comes meanwhile waits for this thread
        // (ExitHooks.waitForStartAtExit), then flushes.
        transport.prepare()
        let worker = Worker(flusher: Flusher(outbox: outbox, transport: transport), dsn: dsn) {
            let session = SessionTracker.shared.begin(context: context, markerDirectory: markerDirectory, crashedSessions: crashedSessions)
            for item in session.earlierEnds { outbox.enqueue(Envelope(header: Faultline.envelopeHeader(eventID: nil, dsn: dsn), items: [item])) }
            if outbox.enqueue(Envelope(header: Faultline.envelopeHeader(eventID: nil, dsn: dsn), items: [session.opening])) {
                CrashHandler.noteSessionStartQueued()
            }
        }
        ArchiveDrops.handOver(to: outbox)
        if let dir = options.logArchiveDirectory {
            worker.archiveUploader = ArchiveUploader(
                directory: dir, dsn: dsn, metadata: .init(installID: context.installID, appID: options.appID, release: options.release),
                transport: transport, recheckInterval: options.logArchiveRecheckSeconds,
                drop: { outbox.countDrop(.rejectedByServer, $0) })
        }
        Worker.shared = worker
        if options.flushAtExit { ExitHooks.install() }
        worker.start()
    }

    func configure(options: Options, dsn: DSN?, context: ScopeContext, dataDirectory: DataDirectory, preparation: StartPreparation) {
        inner.withLock { s in
            s.preparation = preparation
            s.options = options
            s.dsn = dsn
            s.context = context
            s.dataDirectory = dataDirectory
        }
    }
}

/// Who and where: the fields every event and every crash report carry.
struct ScopeContext: Sendable {
    var release: String?
    var environment: String?
    var service: String?
    var appID: String?
    var sessionID: String
    var installID: String
    var serverName: String
    /// The process's propagation trace id until spans exist: logs and events share it.
    var traceID: String
    /// When this process's session began (Sentry requires `started` on every session update).
    var sessionStarted = Date()

    init(options: Options, sessionID: String, installID: String) {
        traceID = newEventID()
        release = options.release
        environment = options.environment
        service = options.service
        appID = options.appID
        self.sessionID = sessionID
        self.installID = installID
        // gethostname, not ProcessInfo.hostName: the latter resolves the name (DNS) and costs milliseconds.
        var host = [CChar](repeating: 0, count: 256)
        gethostname(&host, host.count - 1)
        serverName = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The kernel's release (`uname -r`), which the `os` context carries.
    static var kernelVersion: String {
        var u = utsname()
        uname(&u)
        return withUnsafeBytes(of: u.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// Pre-serialised for the crash handler, which only copies these bytes into a report.
    func crashContextJSON() -> [UInt8] {
        var c = CrashContext()
        c.appID = appID
        c.machine = .init(kernelVersion: Self.kernelVersion, architecture: DebugImage.hostArchitecture)
        c.environment = environment
        c.installID = installID
        c.release = release
        c.serverName = serverName
        c.service = service
        c.trace = .init(traceID: traceID, spanID: String(newEventID().prefix(16)))
        return c.jsonBytes
    }
}
