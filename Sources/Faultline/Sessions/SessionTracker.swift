// Release health: one session per process start, ended as exited, crashed or abnormal.
import Foundation
import FaultlineProtocol
import Synchronization

/// Keeps the current session and a marker file: a marker left by an earlier run that neither
/// exited cleanly nor left a crash report means that run ended abnormally (kill -9, OOM, power).
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

    /// Starts this process's session. Returns the envelopes to queue: the earlier run's abnormal
    /// end (if any) and this session's start.
    func begin(context: ScopeContext, markerPath: String, crashedSessions: [String]) -> [Envelope.Item] {
        var items: [Envelope.Item] = []
        if let data = FileManager.default.contents(atPath: markerPath),
           let previous = try? JSONValue.parse(data), let sid = previous["sid"]?.stringValue,
           sid != context.sessionID, !crashedSessions.contains(sid) {
            var update = previous
            update["status"] = "abnormal"
            update["init"] = false
            update["timestamp"] = .string(Self.iso(Date()))
            items.append(Envelope.Item(type: "session", payload: update.serialized()))
        }
        let now = context.sessionStarted
        let payload = Self.payload(context: context, started: now, status: "ok", initial: true, errors: 0)
        try? AtomicFile.write(payload.serialized(), to: markerPath)
        state.withLock { s in
            s.sessionID = context.sessionID
            s.started = now
            s.markerPath = markerPath
            s.context = context
        }
        items.append(Envelope.Item(type: "session", payload: payload.serialized()))
        return items
    }

    func recordError() { state.withLock { $0.errors += 1 } }

    /// The clean end of the process: an `exited` update, and the marker removed.
    func end() -> Envelope.Item? {
        state.withLock { s in
            guard let context = s.context, !s.ended else { return nil }
            s.ended = true
            if let m = s.markerPath { unlink(m) }
            var p = Self.payload(context: context, started: s.started, status: "exited", initial: false, errors: s.errors)
            p["duration"] = .double(Date().timeIntervalSince(s.started))
            return Envelope.Item(type: "session", payload: p.serialized())
        }
    }

    static func payload(context: ScopeContext, started: Date, status: String, initial: Bool, errors: Int) -> JSONValue {
        var attrs: [String: JSONValue] = [:]
        if let r = context.release { attrs["release"] = .string(r) }
        if let e = context.environment { attrs["environment"] = .string(e) }
        return ["sid": .string(context.sessionID), "did": .string(context.installID), "init": .bool(initial),
                "started": .string(iso(started)), "timestamp": .string(iso(Date())), "status": .string(status),
                "errors": .int(Int64(errors)), "attrs": .object(attrs)]
    }

    static func iso(_ d: Date) -> String {
        let f = ISO8601DateFormatter()
        f.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return f.string(from: d)
    }
}
