// The SQLite tables of transactions and spans.
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
