// The session a crash report says the crash ended (report field `session`, written by the crash
// core): the session update the next launch sends for it is made from this.

public struct CrashSession: Sendable, Equatable {
    public var id: String
    /// When the session began, RFC 3339 as the SDK wrote it (Sentry requires it on every update).
    public var started: String?
    /// Whether the SDK had durably queued the session's opening update (`init: true`) before the
    /// crash. When it had not, the server has not counted the session's start: the crash's update
    /// must (`init: true`), or the crash-free rate counts a crash of a session that never began.
    public var startQueued: Bool
    /// Errors the app captured in the session before the crash (report field `session.errors`).
    public var errors = 0

    public init(id: String, started: String?, startQueued: Bool, errors: Int = 0) {
        self.id = id; self.started = started; self.startQueued = startQueued; self.errors = errors
    }

    /// The report's `session`; for reports written before the field existed, the context's
    /// session id (their SDK queued the opening update before anything else it did).
    init?(report j: JSONValue, context: CrashContext) {
        if let s = j["session"], let id = s["id"]?.stringValue {
            self.init(
                id: id, started: s["started"]?.stringValue, startQueued: s["start_queued"]?.boolValue ?? true,
                errors: Int(clamping: min(max(s["errors"]?.int64Value ?? 0, 0), 1 << 31)))
        } else if let id = context.sessionID {
            self.init(id: id, started: context.sessionStarted, startQueued: true)
        } else {
            return nil
        }
    }
}
