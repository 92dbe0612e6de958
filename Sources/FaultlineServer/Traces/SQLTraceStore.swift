// `TraceStore` written once over `SQLDatabase`, for both stores: the statements (with the column
// lists and row mapping of TraceRows) and the two conformances, which only forward here.
import Foundation

enum SQLTraceStore {
    static func storeTransactions(_ db: some SQLDatabase, _ transactions: [IncomingTransaction]) throws {
        guard !transactions.isEmpty else { return }
        try db.writing { c in
            for t in transactions {
                let inserted = try c.rows(
                    """
                    INSERT INTO transactions(\(TraceRows.transactionInsertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(project_id, event_id) DO NOTHING RETURNING id
                    """, TraceRows.transactionValues(t)
                ) { $0.int(0) }
                guard let row = inserted.first else { continue }  // the same transaction sent twice
                let spans = [t.root] + t.spans
                let room = try claimSpanRoom(c, projectID: t.projectID, traceID: t.root.traceID, wanted: spans.count)
                for s in spans.prefix(room) {
                    try c.execute(
                        """
                        INSERT INTO spans(\(TraceRows.spanInsertColumns)) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT(project_id, trace_id, span_id) DO UPDATE SET transaction_row = excluded.transaction_row,
                          parent_span_id = excluded.parent_span_id, name = excluded.name, op = excluded.op, status = excluded.status,
                          start = excluded.start, "end" = excluded."end", is_transaction = excluded.is_transaction, data = excluded.data
                        """, TraceRows.spanValues(s, projectID: t.projectID, transactionRow: row), row: nil)
                }
            }
        }
    }

    /// How many of `wanted` spans the trace may still take, claimed from its count row (created
    /// at 0 if new) in one UPDATE: every SET expression sees the row as it was, so `granted` is
    /// what this claim added, and PostgreSQL's row lock orders concurrent claims.
    static func claimSpanRoom(_ c: any SQLSession, projectID: Int64, traceID: String, wanted: Int) throws -> Int {
        let cap = Int64(TraceLimits.maxSpansPerTrace), k = Int64(wanted)
        try c.execute(
            "INSERT INTO trace_span_counts(project_id, trace_id, spans, granted) VALUES(?, ?, 0, 0) ON CONFLICT(project_id, trace_id) DO NOTHING",
            .int(projectID), .text(traceID))
        let granted =
            try c.rows(
                """
                UPDATE trace_span_counts SET
                  spans = CASE WHEN spans >= ? THEN spans WHEN spans + ? > ? THEN ? ELSE spans + ? END,
                  granted = CASE WHEN spans >= ? THEN 0 WHEN spans + ? > ? THEN ? - spans ELSE ? END
                WHERE project_id = ? AND trace_id = ? RETURNING granted
                """,
                [.int(cap), .int(k), .int(cap), .int(cap), .int(k), .int(cap), .int(k), .int(cap), .int(cap), .int(k), .int(projectID), .text(traceID)]
            ) { $0.int(0) }.first ?? 0
        return Int(max(0, granted))
    }

    static let linkSQL = "INSERT INTO occurrence_traces(occurrence_id, project_id, event_id, trace_id, span_id) VALUES(?, ?, ?, ?, ?) " + linkConflict

    /// A link given again replaces the first (also PostgresIngestBatcher's rule).
    static let linkConflict = """
        ON CONFLICT(occurrence_id) DO UPDATE SET project_id = excluded.project_id, event_id = excluded.event_id,
          trace_id = excluded.trace_id, span_id = excluded.span_id
        """

    static func linkValues(_ occurrenceID: Int64, _ projectID: Int64, _ eventID: String, _ traceID: String, _ spanID: String?) -> [SQLValue] {
        [.int(occurrenceID), .int(projectID), .text(eventID), .text(traceID), .nullable(spanID)]
    }

    static func trace(_ db: some SQLDatabase, projectID: Int64, traceID: String) throws -> StoredTrace {
        try db.reading { c in
            var spans = try c.rows(
                "SELECT \(TraceRows.spanColumns) FROM spans WHERE project_id = ? AND trace_id = ? ORDER BY start LIMIT ?",
                .int(projectID), .text(traceID), .int(Int64(TraceLimits.maxSpansPerTrace + 1))
            ) { TraceRows.span($0, traceID: traceID) }
            var occurrences = try c.rows(
                "SELECT occurrence_id, event_id, span_id FROM occurrence_traces WHERE project_id = ? AND trace_id = ? ORDER BY occurrence_id LIMIT ?",
                .int(projectID), .text(traceID), .int(Int64(TraceLimits.maxOccurrencesPerTrace + 1)), map: TraceRows.occurrence)
            let cut = spans.count > TraceLimits.maxSpansPerTrace || occurrences.count > TraceLimits.maxOccurrencesPerTrace
            spans = Array(spans.prefix(TraceLimits.maxSpansPerTrace))
            occurrences = Array(occurrences.prefix(TraceLimits.maxOccurrencesPerTrace))
            return StoredTrace(spans: spans, occurrences: occurrences, cut: cut)
        }
    }

    static func recentTransactions(_ db: some SQLDatabase, projectID: Int64, name: String?, status: String?, limit: Int, offset: Int) throws
        -> [TransactionSummary]
    {
        try db.reading { c in
            try c.rows(
                """
                SELECT \(TraceRows.transactionColumns) FROM transactions
                WHERE project_id = ?1 AND (CAST(?2 AS TEXT) IS NULL OR name = ?2) AND (CAST(?3 AS TEXT) IS NULL OR coalesce(status, 'ok') = ?3)
                ORDER BY received DESC, id DESC LIMIT ?4 OFFSET ?5
                """, .int(projectID), .nullable(name), .nullable(status), .int(Int64(limit)), .int(Int64(offset)), map: TraceRows.transaction)
        }
    }

    static func traceOf(_ db: some SQLDatabase, occurrenceID: Int64) throws -> (traceID: String, spanID: String?)? {
        try db.reading { c in
            try c.first("SELECT trace_id, span_id FROM occurrence_traces WHERE occurrence_id = ?", .int(occurrenceID)) {
                (traceID: $0.text(0) ?? "", spanID: $0.text(1))
            }
        }
    }

    static func deleteTransactions(_ db: some SQLDatabase, receivedBefore cutoff: Double) throws -> Int {
        try db.writing { c in
            try c.execute("DELETE FROM spans WHERE transaction_row IN (SELECT id FROM transactions WHERE received < ?)", .double(cutoff))
            let deleted = try c.execute("DELETE FROM transactions WHERE received < ?", .double(cutoff))
            // A trace none of whose spans is left starts again from zero.
            try c.execute(
                """
                DELETE FROM trace_span_counts WHERE NOT EXISTS
                  (SELECT 1 FROM spans s WHERE s.project_id = trace_span_counts.project_id AND s.trace_id = trace_span_counts.trace_id)
                """)
            return deleted
        }
    }
}

/// `TraceStore` for both stores (ingest links an event in the transaction that stores it: `storeIngest`).
extension SQLBackedStore {
    private var db: any SQLDatabase { sqlBacking.database }
    public func storeTransactions(_ t: [IncomingTransaction]) throws { try SQLTraceStore.storeTransactions(db, t) }
    public func linkOccurrence(occurrenceID: Int64, projectID: Int64, eventID: String, traceID: String, spanID: String?) throws {
        let values = SQLTraceStore.linkValues(occurrenceID, projectID, eventID, traceID, spanID)
        try db.writing { c in try c.execute(SQLTraceStore.linkSQL, values, row: nil) }
    }
    public func trace(projectID: Int64, traceID: String) throws -> StoredTrace {
        try SQLTraceStore.trace(db, projectID: projectID, traceID: traceID)
    }
    public func recentTransactions(projectID: Int64, name: String?, status: String?, limit: Int, offset: Int) throws -> [TransactionSummary] {
        try SQLTraceStore.recentTransactions(db, projectID: projectID, name: name, status: status, limit: limit, offset: offset)
    }
    public func traceOf(occurrenceID: Int64) throws -> (traceID: String, spanID: String?)? { try SQLTraceStore.traceOf(db, occurrenceID: occurrenceID) }
    @discardableResult
    public func deleteTransactions(receivedBefore cutoff: Double) throws -> Int { try SQLTraceStore.deleteTransactions(db, receivedBefore: cutoff) }
}

extension SQLiteStore: TraceStore {}
extension PostgresStore: TraceStore {}
