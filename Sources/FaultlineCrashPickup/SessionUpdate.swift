// The session update the pickup sends for a crashed run.
import FaultlineProtocol

/// Sentry session update payloads.
enum SessionUpdate {
    /// The run's session ended in a crash, at the report's time; its errors are those the app
    /// captured and the crash. `initial`: the update also
    /// opens the session, because its opening update was never queued (see `opens`).
    static func crashed(_ session: CrashSession, report: CrashReport, initial: Bool) -> SessionPayload {
        let context = report.crashContext
        let ts = SentryTimestamp.rfc3339(report.timestamp)
        return SessionPayload(
            sessionID: session.id, installID: context.installID, initial: initial, started: session.started ?? ts, timestamp: ts,
            status: .crashed, errors: session.errors + 1, release: context.release, environment: context.environment)
    }

    /// Whether the crash's update must open the session: its opening update was not queued before
    /// the crash. The report says so; and a crash between queueing it and the core noting that
    /// leaves the opening update still in the outbox (only the SDK thread that queued it sends),
    /// where it is looked for, so the start is counted once either way.
    static func opens(_ session: CrashSession, outbox: Outbox) -> Bool {
        !session.startQueued && !outbox.holdsSessionStart(session.id)
    }
}
