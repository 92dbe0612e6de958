// Release health: one session per process start, ended as exited, crashed or abnormal.
import FaultlineCrashPickup
import Foundation
import FaultlineProtocol
import Synchronization
import FaultlineFiles

/// Keeps the current session and a marker file per running process: a marker whose process is
/// gone, and that neither exited cleanly nor left a crash report, means that run ended abnormally
/// (kill -9, OOM, power loss).
final class SessionTracker: Sendable {
    static let shared = SessionTracker()

    private struct State {
        var sessionID = ""
        var started = Date()
        var errors = 0
        var markerPath: String?
        var context: ScopeContext?
        var ended = false
    }
    private let state = Mutex(State())

    /// Starts this process's session. Returns the items to queue: the abnormal ends of earlier
    /// runs (if any) and this session's opening update (`init: true`). `markerDirectory` holds one
    /// marker per running process, so two instances of one program never mistake each other for dead.
    func begin(context: ScopeContext, markerDirectory: String, crashedSessions: [String])
        -> (earlierEnds: [Envelope.Item], opening: Envelope.Item)
    {
        var items: [Envelope.Item] = []
        let fm = FileManager.default
        try? fm.createDirectory(atPath: markerDirectory, withIntermediateDirectories: true)
        for name in (try? fm.contentsOfDirectory(atPath: markerDirectory)) ?? [] where name.hasSuffix(".json") {
            let path = markerDirectory + "/" + name
            guard let data = fm.contents(atPath: path), let marker = try? JSONValue.parse(data),
                var previous = marker["session"].flatMap(SessionPayload.init(json:))
            else { unlink(path); continue }
            let sid = previous.sessionID
            let pid = Int32(marker["pid"]?.int64Value ?? 0)
            if pid > 0, let started = marker["process_start"]?.stringValue, Self.processStart(pid) == started { continue }  // still running
            if sid != context.sessionID && !crashedSessions.contains(sid) {
                previous.status = .abnormal
                previous.initial = false
                previous.timestamp = Self.iso(Date())
                items.append(Envelope.Item(type: "session", payload: previous.json.serialized()))
            }
            unlink(path)
        }
        let now = context.sessionStarted
        let markerPath = markerDirectory + "/\(getpid()).json"
        // Errors captured before the worker began the session (between start and here) count.
        let payload = state.withLock { s -> JSONValue in
            s.sessionID = context.sessionID
            s.started = now
            s.markerPath = markerPath
            s.context = context
            let p = Self.payload(context: context, started: now, status: .ok, initial: true, errors: s.errors).json
            try? AtomicFile.write(Self.marker(p).serialized(), to: markerPath)
            return p
        }
        return (items, Envelope.Item(type: "session", payload: payload.serialized()))
    }

    /// Field 22 of /proc/<pid>/stat (start time in clock ticks since boot): with the pid, it
    /// tells a live process from a new one that reused the pid.
    static func processStart(_ pid: Int32) -> String? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? String(fields[19]) : nil  // fields after "(comm)" start at field 3
    }

    /// One more error captured: counted for the clean end's update, for a crash's (the crash core
    /// keeps the count for its report) and for a killed run's (the marker the next launch reads
    /// carries it: an `abnormal` end said 0 errors after 20).
    func recordError() {
        CrashHandler.noteSessionError()
        state.withLock { s in
            s.errors += 1
            guard let context = s.context, let path = s.markerPath, !s.ended else { return }
            let payload = Self.payload(context: context, started: s.started, status: .ok, initial: true, errors: s.errors).json
            try? AtomicFile.write(Self.marker(payload).serialized(), to: path)
        }
    }

    /// The marker of this process's session: what the next launch ends as `abnormal` if this
    /// process dies without ending it.
    static func marker(_ session: JSONValue) -> JSONValue {
        ["session": session, "pid": .int(Int64(getpid())), "process_start": .string(ownProcessStart ?? "")]
    }

    /// This process's start time, read once (a fork's child reads its own: it never writes a marker).
    private static let ownProcessStart: String? = processStart(getpid())

    /// The clean end of the process: an `exited` update, and the marker removed.
    func end() -> Envelope.Item? {
        state.withLock { s in
            guard let context = s.context, !s.ended else { return nil }
            s.ended = true
            if let m = s.markerPath { unlink(m) }
            var p = Self.payload(context: context, started: s.started, status: .exited, initial: false, errors: s.errors)
            p.duration = Date().timeIntervalSince(s.started)
            return Envelope.Item(type: "session", payload: p.json.serialized())
        }
    }

    static func payload(context: ScopeContext, started: Date, status: SessionPayload.Status, initial: Bool, errors: Int) -> SessionPayload {
        SessionPayload(
            sessionID: context.sessionID, installID: context.installID, initial: initial, started: iso(started), timestamp: iso(Date()),
            status: status, errors: errors, release: context.release, environment: context.environment)
    }

    static func iso(_ d: Date) -> String { SentryTimestamp.rfc3339(d.timeIntervalSince1970) }
}
