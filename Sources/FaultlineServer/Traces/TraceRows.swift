// What both trace stores select and how a row becomes a record: the same column lists on SQLite
// and PostgreSQL (`end` is quoted: a reserved word in PostgreSQL, an ordinary identifier in SQLite).
import Foundation

enum TraceRows {
    static let spanColumns = #"span_id, parent_span_id, name, op, status, start, "end", is_transaction, data"#
    static let transactionColumns = #"trace_id, span_id, name, op, status, start, "end", span_count, received"#

    static func span(_ r: any SQLRow, traceID: String) -> SpanRecord {
        SpanRecord(
            traceID: traceID, spanID: r.text(0) ?? "", parentSpanID: r.text(1), name: r.text(2) ?? "",
            op: r.text(3), status: r.text(4), start: r.double(5), end: r.double(6),
            isTransaction: r.int(7) != 0, data: r.text(8))
    }

    static func transaction(_ r: any SQLRow) -> TransactionSummary {
        TransactionSummary(
            traceID: r.text(0) ?? "", spanID: r.text(1) ?? "", name: r.text(2) ?? "", op: r.text(3),
            status: r.text(4), start: r.double(5), end: r.double(6), spanCount: r.int(7), received: r.double(8))
    }

    static func occurrence(_ r: any SQLRow) -> TracedOccurrence {
        TracedOccurrence(occurrenceID: r.int(0), eventID: r.text(1) ?? "", spanID: r.text(2))
    }

    /// A span's values in `spanInsertColumns` order, after project and transaction row.
    static let spanInsertColumns = #"project_id, trace_id, span_id, transaction_row, parent_span_id, name, op, status, start, "end", is_transaction, data"#
    static func spanValues(_ s: SpanRecord, projectID: Int64, transactionRow: Int64) -> [SQLValue] {
        [
            .int(projectID), .text(s.traceID), .text(s.spanID), .int(transactionRow), .nullable(s.parentSpanID), .text(s.name),
            .nullable(s.op), .nullable(s.status), .double(s.start), .double(s.end), .int(s.isTransaction ? 1 : 0), .nullable(s.data)
        ]
    }

    static let transactionInsertColumns = #"project_id, event_id, trace_id, span_id, name, op, status, start, "end", span_count, received"#
    static func transactionValues(_ t: IncomingTransaction) -> [SQLValue] {
        [
            .int(t.projectID), .text(t.eventID), .text(t.root.traceID), .text(t.root.spanID), .text(t.root.name),
            .nullable(t.root.op), .nullable(t.root.status), .double(t.root.start), .double(t.root.end),
            .int(Int64(t.spans.count + 1)), .double(t.received)
        ]
    }
}
