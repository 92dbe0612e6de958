// Recording a grouped batch on PostgreSQL, where every node groups at once: a fixed handful of
// statements per batch whatever its size (each column of the batch is one array parameter,
// `PGArray`), because a round trip per occurrence (four of them) was what kept one node's grouping
// behind its own ingest. Two nodes' batches are kept apart by the database alone:
// - an occurrence is claimed by locking its row with `processed = 0` checked again after any wait,
//   so one that another node (or a scan here) grouped meanwhile is skipped, never counted twice;
//   it is marked grouped, with its stack and issue, by one update at the end of the batch;
// - an issue is made once per fingerprint (an insert that does nothing when the row exists, so two
//   nodes grouping one new crash make one issue), and the batch's count is added to an existing
//   issue's row by the batch's last statement, to whatever count the row has when its lock is
//   granted: counted once per occurrence. Last, because every node's batches add to the same few
//   issues in a storm, and a row locked earlier stayed locked through the batch's other
//   statements, which made the nodes' grouping take turns;
// - rows are locked in one order on every node (occurrences by id, then stacks, new issues,
//   releases, environment and tag rows, each sorted, and the existing issues last, by id, as a
//   merge locks them), so two batches cannot wait on each other in a cycle;
// - a fingerprint whose issue was merged into another counts into that other one; one merged
//   since the batch looked (read again under the row lock) fails the batch, which is grouped again.
import Foundation
import FaultlineProtocol

extension PostgresStore {
    public func recordGrouping(_ outcomes: [GroupingOutcome]) throws {
        // An occurrence can reach the worker twice (queued at ingest and found by a scan): once here.
        var seen = Set<Int64>()
        let batch = outcomes.filter { seen.insert($0.occurrenceID).inserted }.sorted { $0.occurrenceID < $1.occurrenceID }
        guard !batch.isEmpty else { return }
        try write { c in
            let claimed = try Self.claimOccurrences(c, batch)
            let mine = batch.filter { claimed.contains($0.occurrenceID) }
            guard !mine.isEmpty else { return }
            try Self.recordStacks(c, mine)
            let (issues, existing) = try Self.ensureIssues(c, mine)
            let issueOf = { (o: GroupingOutcome) in issues[IssueKey(projectID: o.projectID, fingerprint: o.fingerprint.hash)]! }
            let releases = Set(mine.compactMap { o in o.release.map { ReleaseKey(issueID: issueOf(o), release: $0) } }).sorted()
            if !releases.isEmpty {
                try c.query(
                    """
                    INSERT INTO issue_releases(issue_id, release)
                    SELECT * FROM unnest($1::bigint[], $2::text[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING
                    """, PGArray.ints(releases.map(\.issueID)), PGArray.texts(releases.map(\.release)))
            }
            // One new version of each occurrence row (every index it is in written once), not one
            // for the claim and another for the issue.
            try c.query(
                """
                UPDATE occurrences o SET processed = 1, stack_key = v.key, issue_id = v.issue
                FROM unnest($1::bigint[], $2::text[], $3::bigint[]) AS v(id, key, issue) WHERE o.id = v.id
                """, PGArray.ints(mine.map(\.occurrenceID)), PGArray.texts(mine.map(\.stackKey)), PGArray.ints(mine.map(issueOf)))
            let pairs = GroupingOutcome.environmentPairs(mine)
            if !pairs.isEmpty {
                try c.query(
                    """
                    INSERT INTO web_stack_envs(environment, stack_key)
                    SELECT * FROM unnest($1::text[], $2::text[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING
                    """, PGArray.texts(pairs.map(\.environment)), PGArray.texts(pairs.map(\.stackKey)))
            }
            let triples = GroupingOutcome.tagTriples(mine)
            if !triples.isEmpty {
                try c.query(
                    """
                    INSERT INTO web_stack_tags(tag_key, tag_value, stack_key)
                    SELECT * FROM unnest($1::text[], $2::text[], $3::text[]) ORDER BY 1, 2, 3 ON CONFLICT DO NOTHING
                    """, PGArray.texts(triples.map { $0[0] }), PGArray.texts(triples.map { $0[1] }), PGArray.texts(triples.map { $0[2] }))
            }
            try Self.countIntoIssues(c, existing)
        }
    }

    /// Issues merged while a batch was being grouped into them: the batch's transaction fails and
    /// the grouping worker takes its rows again.
    struct GroupingMergeRaceError: Error, CustomStringConvertible {
        let issues: [Int64]
        var description: String { "issues \(issues) were merged while grouping counted into them; the batch is grouped again" }
    }

    /// Locks the batch's ungrouped occurrences for this transaction (marked grouped, with their
    /// stack and issue, by `recordGrouping`'s last update) and returns their ids: rows locked in id
    /// order; a row another transaction holds is waited for and then skipped if that one grouped it
    /// (READ COMMITTED checks `processed = 0` again on the row's newest version).
    private static func claimOccurrences(_ c: PGConnection, _ batch: [GroupingOutcome]) throws -> Set<Int64> {
        var claimed = Set<Int64>()
        try c.query(
            "SELECT id FROM occurrences WHERE id = ANY($1::bigint[]) AND processed = 0 ORDER BY id FOR UPDATE",
            PGArray.ints(batch.map(\.occurrenceID))
        ) { claimed.insert($0.int(0)) }
        return claimed
    }

    /// Stores each new distinct stack and the build-ids its frames name (backfill finds stacks by them).
    private static func recordStacks(_ c: PGConnection, _ mine: [GroupingOutcome]) throws {
        var byKey: [String: GroupingOutcome] = [:]
        for o in mine where byKey[o.stackKey] == nil { byKey[o.stackKey] = o }
        let keys = byKey.keys.sorted()
        var added: [String] = []
        try c.query(
            "INSERT INTO stacks(key, signature) SELECT * FROM unnest($1::text[], $2::bytea[]) ORDER BY 1 ON CONFLICT DO NOTHING RETURNING key",
            PGArray.texts(keys), PGArray.blobs(keys.map { byKey[$0]!.stackEncoded })
        ) { added.append($0.text(0) ?? "") }
        let modules = added.flatMap { key in byKey[key].map { o in o.stackBuildIDs.map { ($0.hex, key) } } ?? [] }
            .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        guard !modules.isEmpty else { return }
        try c.query(
            """
            INSERT INTO stack_modules(build_id, stack_key)
            SELECT * FROM unnest($1::text[], $2::text[]) ORDER BY 1, 2 ON CONFLICT DO NOTHING
            """, PGArray.texts(modules.map(\.0)), PGArray.texts(modules.map(\.1)))
    }

    /// The batch's occurrences of one issue: how many, and their first and last timestamps.
    struct IssueTally {
        var fingerprint: Fingerprint
        var count: Int64
        var first: Double
        var last: Double
    }

    /// What the batch adds to an issue that existed before it.
    struct IssueCount {
        var count: Int64
        var first: Double
        var last: Double
        func adding(_ other: IssueCount?) -> IssueCount {
            guard let other else { return self }
            return IssueCount(count: count + other.count, first: min(first, other.first), last: max(last, other.last))
        }
    }

    /// Each issue of the batch, made if it is new (with the batch's count, first and last seen);
    /// returns the live issue each fingerprint groups into and what to add to the issues that
    /// existed, which `countIntoIssues` adds last. A fingerprint whose issue was merged into another
    /// groups into that other one (a merge sticks). An issue another node is making at the same
    /// moment is waited for (the insert meets its row), then read like any existing one.
    private static func ensureIssues(_ c: PGConnection, _ mine: [GroupingOutcome]) throws -> ([IssueKey: Int64], [Int64: IssueCount]) {
        var tallies: [IssueKey: IssueTally] = [:]
        for o in mine {
            let k = IssueKey(projectID: o.projectID, fingerprint: o.fingerprint.hash)
            if var t = tallies[k] {
                t.count += 1; t.first = min(t.first, o.timestamp); t.last = max(t.last, o.timestamp)
                tallies[k] = t
            } else {
                tallies[k] = IssueTally(fingerprint: o.fingerprint, count: 1, first: o.timestamp, last: o.timestamp)
            }
        }
        let keys = tallies.keys.sorted()
        let rows = keys.map { tallies[$0]! }
        var ids: [IssueKey: Int64] = [:]
        try c.query(
            """
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::bigint[], $8::int[])
            ORDER BY 1, 2
            ON CONFLICT(project_id, fingerprint) DO NOTHING
            RETURNING id, project_id, fingerprint
            """, PGArray.ints(keys.map(\.projectID)), PGArray.texts(keys.map(\.fingerprint)), PGArray.texts(rows.map(\.fingerprint.title)),
            PGArray.texts(rows.map(\.fingerprint.culprit)), PGArray.doubles(rows.map(\.first)), PGArray.doubles(rows.map(\.last)),
            PGArray.ints(rows.map(\.count)), PGArray.ints(rows.map { $0.fingerprint.symbolicated ? 1 : 0 })
        ) { ids[IssueKey(projectID: $0.int(1), fingerprint: $0.text(2) ?? "")] = $0.int(0) }
        let existing = keys.filter { ids[$0] == nil }
        guard !existing.isEmpty else { return (ids, [:]) }
        try c.query(
            """
            SELECT coalesce(i.merged_into, i.id), i.project_id, i.fingerprint FROM issues i
            JOIN unnest($1::bigint[], $2::text[]) AS k(project_id, fingerprint) ON i.project_id = k.project_id AND i.fingerprint = k.fingerprint
            """, PGArray.ints(existing.map(\.projectID)), PGArray.texts(existing.map(\.fingerprint))
        ) { ids[IssueKey(projectID: $0.int(1), fingerprint: $0.text(2) ?? "")] = $0.int(0) }
        // Neither made nor found: removed between the two statements (nothing that removes issues
        // runs beside grouping, but a batch must not fail on it): made again, counted with it.
        let gone = existing.filter { ids[$0] == nil }
        if !gone.isEmpty {
            try makeIssues(c, gone.map { ($0, tallies[$0]!) }) { ids[IssueKey(projectID: $0.int(1), fingerprint: $0.text(2) ?? "")] = $0.int(0) }
        }
        var counts: [Int64: IssueCount] = [:]
        for k in existing where !gone.contains(k) {
            let t = tallies[k]!, id = ids[k]!
            counts[id] = IssueCount(count: t.count, first: t.first, last: t.last).adding(counts[id])
        }
        return (ids, counts)
    }

    /// Adds the batch's occurrences to the issues that existed before it: the count, and first
    /// and last seen widened. Rows locked in id order, as every node and every merge locks them,
    /// then read again: an issue merged since `ensureIssues` looked fails the batch (nothing of it
    /// commits; the grouping worker takes its rows again and finds the issue they go to now).
    /// Locking that issue here instead, past rows already held, could wait on a batch that holds
    /// it and waits on ours; merges are rare, a retried batch is cheap.
    private static func countIntoIssues(_ c: PGConnection, _ counts: [Int64: IssueCount]) throws {
        guard !counts.isEmpty else { return }
        let ids = counts.keys.sorted()
        var mergedSince: [Int64] = []
        try c.query("SELECT id, merged_into FROM issues WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE", PGArray.ints(ids)) {
            if !$0.isNull(1) { mergedSince.append($0.int(0)) }
        }
        guard mergedSince.isEmpty else { throw GroupingMergeRaceError(issues: mergedSince) }
        let values = ids.map { counts[$0]! }
        try c.query(
            """
            UPDATE issues SET
              first_seen = CASE WHEN issues.count = 0 THEN v.first ELSE least(issues.first_seen, v.first) END,
              last_seen = CASE WHEN issues.count = 0 THEN v.last ELSE greatest(issues.last_seen, v.last) END,
              count = issues.count + v.n
            FROM unnest($1::bigint[], $2::float8[], $3::float8[], $4::bigint[]) AS v(id, first, last, n)
            WHERE issues.id = v.id
            """, PGArray.ints(ids), PGArray.doubles(values.map(\.first)), PGArray.doubles(values.map(\.last)), PGArray.ints(values.map(\.count)))
    }

    /// Makes the issues or adds to them by fingerprint (for fingerprints whose row vanished
    /// between `ensureIssues`' two statements). In (project, fingerprint) order.
    private static func makeIssues(_ c: PGConnection, _ tallies: [(IssueKey, IssueTally)], ids: ((PGRow) throws -> Void)? = nil) throws {
        guard !tallies.isEmpty else { return }
        try c.query(
            """
            INSERT INTO issues(project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated)
            SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::float8[], $6::float8[], $7::bigint[], $8::int[])
            ORDER BY 1, 2
            ON CONFLICT(project_id, fingerprint) DO UPDATE SET
              first_seen = least(issues.first_seen, EXCLUDED.first_seen), last_seen = greatest(issues.last_seen, EXCLUDED.last_seen),
              count = issues.count + EXCLUDED.count
            RETURNING id, project_id, fingerprint
            """, PGArray.ints(tallies.map(\.0.projectID)), PGArray.texts(tallies.map(\.0.fingerprint)),
            PGArray.texts(tallies.map(\.1.fingerprint.title)), PGArray.texts(tallies.map(\.1.fingerprint.culprit)),
            PGArray.doubles(tallies.map(\.1.first)), PGArray.doubles(tallies.map(\.1.last)), PGArray.ints(tallies.map(\.1.count)),
            PGArray.ints(tallies.map { $0.1.fingerprint.symbolicated ? 1 : 0 }), row: ids)
    }

    private struct IssueKey: Hashable, Comparable {
        var projectID: Int64
        var fingerprint: String
        static func < (a: Self, b: Self) -> Bool { (a.projectID, a.fingerprint) < (b.projectID, b.fingerprint) }
    }

    private struct ReleaseKey: Hashable, Comparable {
        var issueID: Int64
        var release: String
        static func < (a: Self, b: Self) -> Bool { (a.issueID, a.release) < (b.issueID, b.release) }
    }
}
