// `TraceStore` over the same SQLite database: tables of their own, created on first open.
import Foundation

enum TraceSchema {
    static let statements = """
    CREATE TABLE IF NOT EXISTS transactions(
        id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, event_id TEXT NOT NULL, trace_id TEXT NOT NULL,
        span_id TEXT NOT NULL, name TEXT NOT NULL, op TEXT, status TEXT, start REAL NOT NULL, end REAL NOT NULL,
        span_count INTEGER NOT NULL, received REAL NOT NULL, UNIQUE(project_id, event_id));
    CREATE INDEX IF NOT EXISTS transactions_recent ON transactions(project_id, received);
    CREATE INDEX IF NOT EXISTS transactions_trace ON transactions(project_id, trace_id);
    CREATE TABLE IF NOT EXISTS spans(
        project_id INTEGER NOT NULL, trace_id TEXT NOT NULL, span_id TEXT NOT NULL, transaction_row INTEGER NOT NULL,
        parent_span_id TEXT, name TEXT NOT NULL, op TEXT, status TEXT, start REAL NOT NULL, end REAL NOT NULL,
        is_transaction INTEGER NOT NULL, data TEXT,
        PRIMARY KEY(project_id, trace_id, span_id)) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS spans_transaction ON spans(transaction_row);
    CREATE TABLE IF NOT EXISTS occurrence_traces(
        occurrence_id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, event_id TEXT NOT NULL,
        trace_id TEXT NOT NULL, span_id TEXT);
    CREATE INDEX IF NOT EXISTS occurrence_traces_trace ON occurrence_traces(project_id, trace_id);
    """
}

extension SQLiteStore: TraceStore {
    public func storeTransactions(_ transactions: [IncomingTransaction]) throws {
        guard !transactions.isEmpty else { return }
        try writer.sync { c in
            for t in transactions {
                let inserted = try c.run("INSERT OR IGNORE INTO transactions(\(TraceRows.transactionInsertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                         TraceRows.transactionValues(t))
                guard inserted > 0 else { continue }  // the same transaction sent twice
                let row = c.lastInsertRowID
                for s in [t.root] + t.spans {
                    try c.run("INSERT OR REPLACE INTO spans(\(TraceRows.spanInsertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              TraceRows.spanValues(s, projectID: t.projectID, transactionRow: row))
                }
            }
        }
    }

    public func linkOccurrence(occurrenceID: Int64, projectID: Int64, eventID: String, traceID: String, spanID: String?) throws {
        // Not waited for: the link is an index over an event that is already committed.
        writer.async { c in
            try c.run("INSERT OR REPLACE INTO occurrence_traces(occurrence_id, project_id, event_id, trace_id, span_id) VALUES(?, ?, ?, ?, ?)",
                      .int(occurrenceID), .int(projectID), .text(eventID), .text(traceID), .nullable(spanID))
        }
    }

    public func trace(projectID: Int64, traceID: String) throws -> (spans: [SpanRecord], occurrences: [TracedOccurrence]) {
        try read { c in
            var spans: [SpanRecord] = []
            try c.query("SELECT \(TraceRows.spanColumns) FROM spans WHERE project_id = ? AND trace_id = ? ORDER BY start",
                        .int(projectID), .text(traceID)) { spans.append(TraceRows.span($0, traceID: traceID)) }
            var occurrences: [TracedOccurrence] = []
            try c.query("SELECT occurrence_id, event_id, span_id FROM occurrence_traces WHERE project_id = ? AND trace_id = ? ORDER BY occurrence_id",
                        .int(projectID), .text(traceID)) { occurrences.append(TraceRows.occurrence($0)) }
            return (spans, occurrences)
        }
    }

    public func recentTransactions(projectID: Int64, name: String?, status: String?, limit: Int, offset: Int) throws -> [TransactionSummary] {
        try read { c in
            var out: [TransactionSummary] = []
            try c.query("""
                SELECT \(TraceRows.transactionColumns) FROM transactions
                WHERE project_id = ?1 AND (?2 IS NULL OR name = ?2) AND (?3 IS NULL OR coalesce(status, 'ok') = ?3)
                ORDER BY received DESC, id DESC LIMIT ?4 OFFSET ?5
                """, .int(projectID), .nullable(name), .nullable(status), .int(Int64(limit)), .int(Int64(offset))) { out.append(TraceRows.transaction($0)) }
            return out
        }
    }

    public func traceOf(occurrenceID: Int64) throws -> (traceID: String, spanID: String?)? {
        try read { c in
            var out: (String, String?)?
            try c.query("SELECT trace_id, span_id FROM occurrence_traces WHERE occurrence_id = ?", .int(occurrenceID)) { r in
                out = (r.text(0) ?? "", r.text(1))
            }
            return out
        }
    }

    @discardableResult
    public func deleteTransactions(receivedBefore cutoff: Double) throws -> Int {
        try writer.sync { c in
            try c.run("DELETE FROM spans WHERE transaction_row IN (SELECT id FROM transactions WHERE received < ?)", .double(cutoff))
            return try c.run("DELETE FROM transactions WHERE received < ?", .double(cutoff))
        }
    }
}
