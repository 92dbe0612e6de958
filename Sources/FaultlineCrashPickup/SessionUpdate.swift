// The session update the pickup sends for a crashed run.
import FaultlineProtocol

/// Sentry session update payloads.
enum SessionUpdate {
    /// The run's session ended in a crash, at the report's time.
    static func crashed(sessionID: String, report: CrashReport) -> SessionPayload {
        let context = report.crashContext
        let ts = SentryTimestamp.rfc3339(report.timestamp)
        return SessionPayload(
            sessionID: sessionID, installID: context.installID, initial: false, started: context.sessionStarted ?? ts, timestamp: ts,
            status: .crashed, errors: 1, release: context.release, environment: context.environment)
    }
}
