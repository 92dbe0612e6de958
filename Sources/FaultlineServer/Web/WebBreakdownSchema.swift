// What the issue page's breakdown and the issues search's tag terms read, in each store's dialect:
// schema migration 15 on both (SQLiteSchema, PostgresSchema).
//
// `occurrences.environment` and `occurrences.os` are written by ingest with the row (rows stored
// before the migration have neither and show as "not recorded"); `web_stack_tags` holds each
// (tag, value, stack) grouping has seen, as `web_stack_envs` holds environments, so a search by
// tag follows a stack through backfills and merges without reading an event. The breakdown reads
// only `web_occurrences_breakdown` (covering: the newest rows by id, with the four
// columns), never the rows themselves.
enum SQLiteWebBreakdownSchema {
    static let statements = """
        ALTER TABLE occurrences ADD COLUMN environment TEXT;
        ALTER TABLE occurrences ADD COLUMN os TEXT;
        CREATE TABLE IF NOT EXISTS web_stack_tags(
            tag_key TEXT NOT NULL, tag_value TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(tag_key, tag_value, stack_key)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS web_occurrences_breakdown ON occurrences(issue_id, id, release, environment, os, install_id)
        """
}

enum PostgresWebBreakdownSchema {
    static let statements = """
        ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS environment TEXT;
        ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS os TEXT;
        CREATE TABLE IF NOT EXISTS web_stack_tags(
            tag_key TEXT NOT NULL, tag_value TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(tag_key, tag_value, stack_key));
        CREATE INDEX IF NOT EXISTS web_occurrences_breakdown ON occurrences(issue_id, id, release, environment, os, install_id)
        """
}
