// `TraceStore` over the same SQLite database: tables of their own, created on first open.
import Foundation

extension SQLiteStore: TraceStore {
    public func storeTransactions(_ transactions: [IncomingTransaction]) throws {
        guard !transactions.isEmpty else { return }
        try writer.sync { c in
            for t in transactions {
                let inserted = try c.run("""
                    INSERT OR IGNORE INTO transactions(project_id, event_id, trace_id, span_id, name, op, status, start, end, span_count, received)
                    VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, .int(t.projectID), .text(t.eventID), .text(t.root.traceID), .text(t.root.spanID), .text(t.root.name),
                    t.root.op.map { .text($0) } ?? .null, t.root.status.map { .text($0) } ?? .null, .double(t.root.start),
                    .double(t.root.end), .int(Int64(t.spans.count + 1)), .double(t.received))
                guard inserted > 0 else { continue }  // the same transaction sent twice
                let row = c.lastInsertRowID
                for s in [t.root] + t.spans {
                    try c.run("""
                        INSERT OR REPLACE INTO spans(project_id, trace_id, span_id, transaction_row, parent_span_id, name, op, status, start, end, is_transaction, data)
                        VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, .int(t.projectID), .text(s.traceID), .text(s.spanID), .int(row), s.parentSpanID.map { .text($0) } ?? .null,
                        .text(s.name), s.op.map { .text($0) } ?? .null, s.status.map { .text($0) } ?? .null, .double(s.start),
                        .double(s.end), .int(s.isTransaction ? 1 : 0), s.data.map { .text($0) } ?? .null)
                }
            }
        }
    }

    public func linkOccurrence(occurrenceID: Int64, projectID: Int64, eventID: String, traceID: String, spanID: String?) throws {
        // Not waited for: the link is an index over an event that is already committed.
        writer.async { c in
            try c.run("INSERT OR REPLACE INTO occurrence_traces(occurrence_id, project_id, event_id, trace_id, span_id) VALUES(?, ?, ?, ?, ?)",
                      .int(occurrenceID), .int(projectID), .text(eventID), .text(traceID), spanID.map { .text($0) } ?? .null)
        }
    }

    public func trace(projectID: Int64, traceID: String) throws -> (spans: [SpanRecord], occurrences: [TracedOccurrence]) {
        try read { c in
            var spans: [SpanRecord] = []
            try c.query("""
                SELECT span_id, parent_span_id, name, op, status, start, end, is_transaction, data FROM spans
                WHERE project_id = ? AND trace_id = ? ORDER BY start
                """, .int(projectID), .text(traceID)) { r in
                spans.append(SpanRecord(traceID: traceID, spanID: r.text(0) ?? "", parentSpanID: r.text(1), name: r.text(2) ?? "",
                                        op: r.text(3), status: r.text(4), start: r.double(5), end: r.double(6),
                                        isTransaction: r.int(7) != 0, data: r.text(8)))
            }
            var occurrences: [TracedOccurrence] = []
            try c.query("SELECT occurrence_id, event_id, span_id FROM occurrence_traces WHERE project_id = ? AND trace_id = ? ORDER BY occurrence_id",
                        .int(projectID), .text(traceID)) { r in
                occurrences.append(TracedOccurrence(occurrenceID: r.int(0), eventID: r.text(1) ?? "", spanID: r.text(2)))
            }
            return (spans, occurrences)
        }
    }

    public func recentTransactions(projectID: Int64, name: String?, status: String?, limit: Int, offset: Int) throws -> [TransactionSummary] {
        try read { c in
            var out: [TransactionSummary] = []
            try c.query("""
                SELECT trace_id, span_id, name, op, status, start, end, span_count, received FROM transactions
                WHERE project_id = ?1 AND (?2 IS NULL OR name = ?2) AND (?3 IS NULL OR coalesce(status, 'ok') = ?3)
                ORDER BY received DESC, id DESC LIMIT ?4 OFFSET ?5
                """, .int(projectID), name.map { .text($0) } ?? .null, status.map { .text($0) } ?? .null, .int(Int64(limit)), .int(Int64(offset))) { r in
                out.append(TransactionSummary(traceID: r.text(0) ?? "", spanID: r.text(1) ?? "", name: r.text(2) ?? "", op: r.text(3),
                                              status: r.text(4), start: r.double(5), end: r.double(6), spanCount: r.int(7), received: r.double(8)))
            }
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
