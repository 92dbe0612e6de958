// What the traces pages read beside `TraceStore`: the newest transactions of a project as
// rows to group by name (a bounded scan, so the list costs the same whatever the table holds),
// and the issue each occurrence linked to a trace was grouped into.
import Foundation

/// One transaction as the transactions list groups it.
struct TransactionRow {
    var traceID: String
    var name: String
    var op: String?
    var status: String
    var duration: Double
    var received: Double
}

/// Transactions of one name in the rows read: what the list shows per name.
struct TransactionGroup {
    var name: String
    var count: Int
    var p50: Double
    var p95: Double
    var errors: Int
    var lastSeen: Double
    var latestTrace: String

    /// Groups rows by name, busiest first; percentiles by nearest rank over the group's durations.
    static func grouped(_ rows: [TransactionRow]) -> [TransactionGroup] {
        var out: [TransactionGroup] = []
        for (name, members) in Dictionary(grouping: rows, by: \.name) {
            let durations = members.map(\.duration).sorted()
            let latest = members.max { $0.received < $1.received }
            out.append(
                TransactionGroup(
                    name: name, count: members.count, p50: percentile(durations, 0.5), p95: percentile(durations, 0.95),
                    errors: members.filter { $0.status != "ok" }.count, lastSeen: latest?.received ?? 0, latestTrace: latest?.traceID ?? ""))
        }
        return out.sorted { ($0.count, $0.lastSeen, $1.name) > ($1.count, $1.lastSeen, $0.name) }
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// The issue an occurrence was grouped into, for a link from the span it happened in.
struct OccurrenceIssue {
    var occurrenceID: Int64
    var issueID: Int64?
    var title: String?
}

extension WebQueries {
    /// The newest `limit` transactions received at or after `since`, optionally only names
    /// containing `text` (case-insensitive) and only `ok` or only failed ones.
    func transactionRows(projectID: Int64, since: Double, text: String, status: String, limit: Int) throws -> [TransactionRow] {
        var sql = #"SELECT trace_id, name, op, coalesce(status, 'ok'), "end" - start, received FROM transactions WHERE project_id = ? AND received >= ?"#
        var args: [SQLValue] = [.int(projectID), .double(since)]
        if !text.isEmpty {
            // lower() folds ASCII letters alike on both stores; beyond ASCII SQLite folds none
            // (docs/SERVER.md's pages table says the filter ignores case for ASCII only).
            sql += " AND \(database.dialect.position)(lower(name), lower(?)) > 0"
            args.append(.text(text))
        }
        switch status {
        case "ok": sql += " AND coalesce(status, 'ok') = 'ok'"
        case "error": sql += " AND coalesce(status, 'ok') <> 'ok'"
        default: break
        }
        sql += " ORDER BY received DESC, id DESC LIMIT ?"
        args.append(.int(Int64(limit)))
        return try database.reading { c in
            try c.rows(sql, args) {
                TransactionRow(
                    traceID: $0.text(0) ?? "", name: $0.text(1) ?? "", op: $0.text(2), status: $0.text(3) ?? "ok", duration: $0.double(4),
                    received: $0.double(5))
            }
        }
    }

    /// The issue (and its title) of each occurrence; merged issues resolve to the one they joined.
    func occurrenceIssues(_ ids: [Int64]) throws -> [Int64: OccurrenceIssue] {
        var out: [Int64: OccurrenceIssue] = [:]
        try database.reading { c in
            // Batches keep each statement's parameter list short on both stores.
            for batch in stride(from: 0, to: ids.count, by: 200).map({ Array(ids[$0..<min($0 + 200, ids.count)]) }) {
                let marks = batch.map { _ in "?" }.joined(separator: ", ")
                let sql = """
                    SELECT o.id, coalesce(i.merged_into, i.id), coalesce(m.title, i.title) FROM occurrences o
                    LEFT JOIN issues i ON i.id = o.issue_id LEFT JOIN issues m ON m.id = i.merged_into WHERE o.id IN (\(marks))
                    """
                try c.execute(sql, batch.map { .int($0) }) { r in
                    let id = r.int(0)
                    out[id] = OccurrenceIssue(occurrenceID: id, issueID: r.isNull(1) ? nil : r.int(1), title: r.text(2))
                }
            }
        }
        return out
    }
}
