// How many spans each trace holds, one row per trace (schema migration 13): the span cap is
// claimed from this row in the transaction that stores the spans, so concurrent ingests on
// PostgreSQL serialise on the row (a count of the spans table could be read by both), and a full
// trace costs one indexed row read, not a count of up to TraceLimits.maxSpansPerTrace rows.
// Traces stored before the migration start from their current count.
enum SQLiteTraceSpanCountSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS trace_span_counts(
            project_id INTEGER NOT NULL, trace_id TEXT NOT NULL, spans INTEGER NOT NULL, granted INTEGER NOT NULL,
            PRIMARY KEY(project_id, trace_id)) WITHOUT ROWID;
        INSERT INTO trace_span_counts(project_id, trace_id, spans, granted)
            SELECT project_id, trace_id, count(*), 0 FROM spans WHERE true GROUP BY project_id, trace_id
            ON CONFLICT(project_id, trace_id) DO NOTHING
        """
}

enum PostgresTraceSpanCountSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS trace_span_counts(
            project_id BIGINT NOT NULL, trace_id TEXT NOT NULL, spans BIGINT NOT NULL, granted BIGINT NOT NULL,
            PRIMARY KEY(project_id, trace_id));
        INSERT INTO trace_span_counts(project_id, trace_id, spans, granted)
            SELECT project_id, trace_id, count(*), 0 FROM spans GROUP BY project_id, trace_id
            ON CONFLICT(project_id, trace_id) DO NOTHING
        """
}
