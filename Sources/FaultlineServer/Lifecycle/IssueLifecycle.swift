// The lifecycle's rules over the store (both dialects, `SQLDatabase`): setting a status with its
// details, and what a new occurrence of a resolved or ignored issue does to it. The status itself
// stays in `web_issue_status` (the pages filter by it); the details sit beside it.
import Foundation
import FaultlineProtocol

/// An issue's status as stored.
public struct IssueState: Sendable, Equatable {
    public var status: IssueStatus
    public var details: IssueStatusDetails
    /// When the status last changed (0 when it never did).
    public var changed: Double
    public var regressions: Int64
}

/// What a new occurrence did to its issue's status.
enum LifecycleTransition: String, Sendable {
    /// A resolved issue occurred again in a release not older than the one it was resolved in.
    case regression
    /// An ignored issue's condition ran out (its count, or its time).
    case unmuted
}

enum IssueLifecycle {
    static func state(_ c: any SQLSession, issueID: Int64) throws -> IssueState {
        let row = try c.first(
            """
            SELECT coalesce(s.status, 'unresolved'), coalesce(s.changed, 0), d.resolved_in, coalesce(d.resolved_in_next, 0),
                   d.ignore_count, d.ignore_until, coalesce(d.regressions, 0)
            FROM (SELECT CAST(? AS BIGINT) AS id) i
            LEFT JOIN web_issue_status s ON s.issue_id = i.id LEFT JOIN issue_status_details d ON d.issue_id = i.id
            """, .int(issueID)
        ) { r in
            IssueState(
                status: IssueStatus(rawValue: r.text(0) ?? "") ?? .unresolved,
                details: IssueStatusDetails(
                    inRelease: r.text(2), inNextRelease: r.int(3) != 0, ignoreCount: r.isNull(4) ? nil : r.int(4),
                    ignoreUntil: r.isNull(5) ? nil : r.double(5)),
                changed: r.double(1), regressions: r.int(6))
        }
        return row ?? IssueState(status: .unresolved, details: IssueStatusDetails(), changed: 0, regressions: 0)
    }

    /// Sets `status` on each live issue (merged ids resolve to their issue). "Resolved in the next
    /// release" is stored as the newest release known now, which a later one must pass.
    static func set(_ c: any SQLSession, issueIDs: [Int64], status: IssueStatus, details: IssueStatusDetails, now: Double) throws {
        for id in issueIDs {
            var d = details
            let project = try c.first("SELECT project_id FROM issues WHERE id = ?", .int(id)) { $0.int(0) }
            if status == .resolved, let project {
                if d.inNextRelease || d.inRelease == ReleaseName.latest {
                    // Sentry's "latest" is the newest release known now; with none known yet,
                    // resolved in the next release, which any release is.
                    let newest = try ReleaseOrder.newest(c, projectID: project)
                    if d.inRelease == ReleaseName.latest { d.inNextRelease = newest == nil }
                    d.inRelease = newest
                } else if let named = d.inRelease {
                    // The fix's release, named before it ships: heard of now, so a release first
                    // seen later is newer than it (and one seen before is not).
                    try ReleaseOrder.note(c, projectID: project, version: named, now: now)
                }
            }
            let countNow = try c.first("SELECT count FROM issues WHERE id = ?", .int(id)) { $0.int(0) } ?? 0
            try c.execute(
                """
                INSERT INTO web_issue_status(issue_id, status, changed) VALUES(?, ?, ?)
                ON CONFLICT(issue_id) DO UPDATE SET status = excluded.status, changed = excluded.changed
                """, .int(id), .text(status.rawValue), .double(now))
            try c.execute(
                """
                INSERT INTO issue_status_details(issue_id, resolved_in, resolved_in_next, ignore_until, ignore_count, count_at_ignore)
                VALUES(?, ?, ?, ?, ?, ?)
                ON CONFLICT(issue_id) DO UPDATE SET resolved_in = excluded.resolved_in, resolved_in_next = excluded.resolved_in_next,
                  ignore_until = excluded.ignore_until, ignore_count = excluded.ignore_count, count_at_ignore = excluded.count_at_ignore
                """, .int(id), status == .resolved ? d.inRelease.map(SQLValue.text) ?? .null : .null,
                .int(status == .resolved && d.inNextRelease ? 1 : 0),
                status == .ignored ? d.ignoreUntil.map(SQLValue.double) ?? .null : .null,
                status == .ignored ? d.ignoreCount.map(SQLValue.int) ?? .null : .null,
                .int(countNow))
        }
    }

    /// New occurrences of `issueID` (`release`, received at `received`), oldest first. The first
    /// that reopens the issue does so: a resolved issue when the occurrence's release is not older
    /// than the one it was resolved in (any release when it was resolved without one; a newer one
    /// when resolved "in the next release"), an ignored issue when its count ran out. Returns what
    /// happened and that occurrence's release, if anything happened. The status is read once for
    /// all of them: nothing before the first transition changes it, and that transition ends the
    /// batch (it was a statement per occurrence, every event's round trip on PostgreSQL).
    static func occurred(
        _ c: any SQLSession, issueID: Int64, projectID: Int64, occurrences: [(release: String?, received: Double)],
        now: Double
    ) throws -> (LifecycleTransition, String?)? {
        guard let first = occurrences.first else { return nil }
        let s = try state(c, issueID: issueID)
        switch s.status {
        case .unresolved:
            return nil
        case .resolved:
            for o in occurrences {
                guard o.received >= s.changed else { continue }  // sent before it was resolved
                if let resolvedIn = s.details.inRelease {
                    guard let release = o.release else { continue }
                    let newer = try ReleaseOrder.isNewer(c, projectID: projectID, release, than: resolvedIn)
                    if s.details.inNextRelease ? !newer : (!newer && release != resolvedIn) { continue }
                } else if s.details.inNextRelease {
                    // Resolved in the next release when no release was known: any release is
                    // the next one; an event that names none is not.
                    guard o.release != nil else { continue }
                }
                try reopen(c, issueID: issueID, now: now, regression: true)
                return (.regression, o.release)
            }
            return nil
        case .ignored:
            // The issue's count is the same for every occurrence of the batch (grouping counted
            // them all before the evaluator saw them): the first decides.
            // Counted as occurrences received since it was ignored, in the issue and those merged
            // into it: a merge brings older occurrences, which must not use the count up. Ids
            // follow arrival, so the newest n rows hold every later one when there are fewer than n.
            guard let n = s.details.ignoreCount else { return nil }
            let newest = IssueGroups.newestFirst(
                columns: "id, received", issue: issueID, members: try IssueGroups.members(c, issueID), limit: Int(clamping: max(n, 1)))
            let since =
                try c.rows("SELECT count(*) FROM (\(newest.sql)) AS newest WHERE received >= ?", newest.args + [.double(s.changed)]) {
                    $0.int(0)
                }.first ?? 0
            guard since >= n else { return nil }
            try reopen(c, issueID: issueID, now: now, regression: false)
            return (.unmuted, first.release)
        }
    }

    /// Ignored issues whose time ran out, brought back (returned, for their alerts).
    static func expireIgnores(_ c: any SQLSession, now: Double) throws -> [(issueID: Int64, projectID: Int64)] {
        let due = try c.rows(
            """
            SELECT s.issue_id, i.project_id FROM web_issue_status s JOIN issue_status_details d ON d.issue_id = s.issue_id
            JOIN issues i ON i.id = s.issue_id
            WHERE s.status = 'ignored' AND d.ignore_until IS NOT NULL AND d.ignore_until <= ?
            """, [.double(now)]
        ) { ($0.int(0), $0.int(1)) }
        for (id, _) in due { try reopen(c, issueID: id, now: now, regression: false) }
        return due.map { (issueID: $0.0, projectID: $0.1) }
    }

    private static func reopen(_ c: any SQLSession, issueID: Int64, now: Double, regression: Bool) throws {
        try c.execute("UPDATE web_issue_status SET status = 'unresolved', changed = ? WHERE issue_id = ?", .double(now), .int(issueID))
        if regression {
            // Upserted: a status set before the details table existed has no row yet.
            try c.execute(
                """
                INSERT INTO issue_status_details(issue_id, regressions, last_regression) VALUES(?, 1, ?)
                ON CONFLICT(issue_id) DO UPDATE SET regressions = issue_status_details.regressions + 1,
                  last_regression = excluded.last_regression
                """, .int(issueID), .double(now))
        }
        try c.execute(
            """
            UPDATE issue_status_details SET resolved_in = NULL, resolved_in_next = 0, ignore_until = NULL, ignore_count = NULL
            WHERE issue_id = ?
            """, .int(issueID))
    }
}
