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
        /// Problems that left part of the SDK off; the app keeps running regardless.
        public var warnings: [String] = []
        /// Time spent installing the crash core (alternate stack, buffers, unwinder pre-warm, sigaction).
        public var crashHandlerStartNanoseconds: UInt64 = 0
        /// Crash reports of earlier runs turned into events during this start.
        public var pickup = CrashPickup()
    }

    /// Starts crash capture and (with a valid DSN) sending. Safe to call again: later calls
    /// update the context and pick up new reports.
    /// - A missing DSN: crashes are still captured and converted into the outbox, nothing is sent.
    /// - A malformed DSN, or one carrying a server token: the SDK stays off entirely.
    @discardableResult
    public static func start(_ options: Options) -> StartResult {
        var result = StartResult()
        var dsn: DSN?
        if let raw = options.dsn, !raw.trimmingCharacters(in: .whitespaces).isEmpty {
            do { dsn = try DSN(parsing: raw) } catch {
                result.warnings.append("Faultline is off: \(error.description)")
                warnOnce(result.warnings.last!)
                return result
            }
        } else {
            result.warnings.append("no DSN given: crashes are captured to disk but nothing is sent")
        }

        let data = DataDirectory(root: options.resolvedDataDirectory)
        result.dataDirectory = data.root
        do { try data.create() } catch {
            result.warnings.append("Faultline is off: cannot use data directory \(data.root): \(error)")
            warnOnce(result.warnings.last!)
            return result
        }
        result.installID = data.installID()
        if options.captureStderr {
            do { try StderrCapture.start(file: options.stderrFile ?? data.root + "/stderr.log", tailBytes: options.stderrTailBytes) } catch {
                result.warnings.append("stderr is not captured: \(error.description)")
                warnOnce(result.warnings.last!)
            }
        }
        let state = SDKState.shared
        let sessionID = state.sessionID
        result.sessionID = sessionID

        let outbox: Outbox
        do { outbox = try state.outbox(directory: data.outbox, byteCap: options.queueByteCap) } catch {
            result.warnings.append("Faultline is off: cannot use outbox \(data.outbox): \(error)")
            warnOnce(result.warnings.last!)
            return result
        }

        // Pick up the previous run's crash before installing our handler for this one.
        let header: (String) -> JSONValue = { eventID in envelopeHeader(eventID: eventID, dsn: dsn) }
        result.pickup = PendingCrashReports.convert(crashDirectory: data.crashes, corruptDirectory: data.corruptCrashes,
                                                    outbox: outbox, sdkName: sdkName, envelopeHeader: header)
        if let dir = options.swiftBacktraceDirectory {
            result.pickup.merge(PendingSwiftBacktraceLogs.convert(directory: dir, corruptDirectory: data.corruptCrashes, outbox: outbox,
                                                                  context: pickupContext(options, installID: result.installID),
                                                                  sdkName: sdkName, envelopeHeader: header))
        }
        if !result.pickup.setAside.isEmpty {
            result.warnings.append("\(result.pickup.setAside.count) corrupt crash report(s) moved to \(data.corruptCrashes)")
        }

        let context = ScopeContext(options: options, sessionID: sessionID, installID: result.installID)
        state.configure(options: options, dsn: dsn, context: context, dataDirectory: data)
        if options.captureCrashes {
            do {
                let t0 = DispatchTime.now().uptimeNanoseconds
                defer { result.crashHandlerStartNanoseconds = DispatchTime.now().uptimeNanoseconds - t0 }
                try CrashHandler.start(crashDirectory: data.crashes)
                CrashHandler.setContext(context.crashContextJSON())
                result.crashHandlerInstalled = true
            } catch {
                result.warnings.append("crash handler not installed: \(error.description)")
                warnOnce(result.warnings.last!)
            }
        }
        if let dsn {
            let headers = ["X-Faultline-Install-Id": result.installID] .merging(options.appID.map { ["X-Faultline-App-Id": $0] } ?? [:]) { a, _ in a }
            state.startSending(dsn: dsn, outbox: outbox, headers: headers, options: options, context: context,
                               markerDirectory: data.root + "/sessions", crashedSessions: result.pickup.previousSessionCrashed)
            result.sending = true
        }
        return result
    }

    /// Sends everything queued now and waits up to `timeout` seconds. False if not started or timed out.
    @discardableResult
    public static func flush(timeout: Double = 5) -> Bool {
        guard let w = Worker.shared else { return false }
        return w.flush(timeout: timeout)
    }

    /// Ends the session as exited and flushes; called at normal exit and on SIGTERM.
    public static func close(timeout: Double = 2) {
        // A forked child inherits this hook but not the worker thread, nor the parent's session.
        guard getpid() == SDKState.shared.startedPID else { return }
        guard let w = Worker.shared, let outbox = SDKState.shared.currentOutbox else { return }
        w.waitUntilSetUp(timeout: timeout)  // a very short run must not end before its session began
        if let end = SessionTracker.shared.end() {
            outbox.enqueue(Envelope(header: envelopeHeader(eventID: nil, dsn: SDKState.shared.dsn), items: [end]))
        }
        w.flush(timeout: timeout)
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

    private struct Inner {
        var outbox: Outbox?
        var options: Options?
        var dsn: DSN?
        var context: ScopeContext?
        var dataDirectory: DataDirectory?
        var workerStarted = false
    }
    private let inner = Mutex(Inner())

    func outbox(directory: String, byteCap: Int) throws -> Outbox {
        try inner.withLock { s in
            if let o = s.outbox, o.directory == directory { return o }
            let o = try Outbox(directory: directory, byteCap: byteCap)
            s.outbox = o
            return o
        }
    }
    var currentOutbox: Outbox? { inner.withLock { $0.outbox } }
    var dsn: DSN? { inner.withLock { $0.dsn } }
    var context: ScopeContext? { inner.withLock { $0.context } }
    var options: Options? { inner.withLock { $0.options } }

    /// Starts the worker once. Later starts change the log level and the crash context; the DSN,
    /// headers and outbox of the first start stay in use for the life of the process.
    func startSending(dsn: DSN, outbox: Outbox, headers: [String: String], options: Options, context: ScopeContext,
                      markerDirectory: String, crashedSessions: [String]) {
        LogBuffer.shared.configure(enabled: true, level: options.sendLogsAtOrAbove)
        // One worker per process, decided under the lock so two racing starts cannot make two.
        let first = inner.withLock { s -> Bool in
            if s.workerStarted { return false }
            s.workerStarted = true
            return true
        }
        guard first else { return }
        // Everything slow (URLSession, the session marker's fsync) happens on the worker's own
        // thread, so start stays cheap for the app's launch.
        let transport = HTTPTransport(dsn: dsn, extraHeaders: headers)
        // libcurl's global init (inside URLSession's) initialises OpenSSL, which registers its own
        // atexit clean-up. Done here on the caller's thread, before our exit hook is registered:
        // our flush at exit then runs while OpenSSL still works, and an exit can never tear
        // OpenSSL down under a half-initialised libcurl on the worker thread (a crash the tests
        // caught once in ~100 short runs). It costs about 2 ms of start, only with a DSN.
        transport.prepare()
        let worker = Worker(flusher: Flusher(outbox: outbox, transport: transport), dsn: dsn) {
            let items = SessionTracker.shared.begin(context: context, markerDirectory: markerDirectory, crashedSessions: crashedSessions)
            for item in items { outbox.enqueue(Envelope(header: Faultline.envelopeHeader(eventID: nil, dsn: dsn), items: [item])) }
        }
        Worker.shared = worker
        if options.flushAtExit { ExitHooks.install() }
        worker.start()
    }

    func configure(options: Options, dsn: DSN?, context: ScopeContext, dataDirectory: DataDirectory) {
        inner.withLock { s in
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

    var osContext: JSONValue {
        var u = utsname()
        uname(&u)
        func field<T>(_ t: T) -> String { withUnsafeBytes(of: t) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } }
        return ["type": "os", "name": "Linux", "kernel_version": .string(field(u.release)), "version": .string(field(u.release))]
    }

    /// Pre-serialised for the crash handler, which only copies these bytes into a report.
    func crashContextJSON() -> JSONValue {
        var o: [String: JSONValue] = ["session_id": .string(sessionID), "install_id": .string(installID),
                                      "session_started": .string(SessionTracker.iso(sessionStarted)),
                                      "server_name": .string(serverName),
                                      // The trace logs and events of this process carry, so a crash joins them.
                                      "trace": ["trace_id": .string(traceID), "span_id": .string(String(newEventID().prefix(16))), "type": "trace"],
                                      "contexts": ["os": osContext, "device": ["type": "device", "arch": "x86_64"]]]
        if let r = release { o["release"] = .string(r) }
        if let e = environment { o["environment"] = .string(e) }
        if let s = service { o["service"] = .string(s) }
        if let a = appID { o["app_id"] = .string(a) }
        return .object(o)
    }
}
