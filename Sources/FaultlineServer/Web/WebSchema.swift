// The web pages' own tables (`web_*`) and indexes, in each store's dialect: part of schema
// migration 5 on both (SQLiteSchema, PostgresSchema).
enum SQLiteWebSchema {
    /// Part of schema migration 5 (SQLiteSchema). IF NOT EXISTS: data directories that made these
    /// tables on first use before the migration keep them.
    static let statements = """
        CREATE TABLE IF NOT EXISTS web_issue_status(
            issue_id INTEGER PRIMARY KEY, status TEXT NOT NULL, changed REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS web_upload_tokens(
            build_id TEXT PRIMARY KEY, token_name TEXT NOT NULL, uploaded REAL NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS web_users(
            name TEXT PRIMARY KEY, salt BLOB NOT NULL, hash BLOB NOT NULL, created REAL NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS web_stack_envs(
            environment TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(environment, stack_key)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS web_state(key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
        -- Per-issue sparkline and installs-affected read only this index (covering), never the event blobs.
        CREATE INDEX IF NOT EXISTS web_occurrences_issue_time ON occurrences(issue_id, timestamp, install_id);
        CREATE INDEX IF NOT EXISTS web_issues_project_seen ON issues(project_id, last_seen, id);
        CREATE INDEX IF NOT EXISTS web_items_type_id ON items(project_id, type, id);
        """
}

enum PostgresWebSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS web_issue_status(
            issue_id BIGINT PRIMARY KEY, status TEXT NOT NULL, changed DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS web_upload_tokens(
            build_id TEXT PRIMARY KEY, token_name TEXT NOT NULL, uploaded DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS web_users(
            name TEXT PRIMARY KEY, salt BYTEA NOT NULL, hash BYTEA NOT NULL, created DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS web_stack_envs(
            environment TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(environment, stack_key));
        CREATE TABLE IF NOT EXISTS web_state(key TEXT PRIMARY KEY, value BIGINT NOT NULL);
        -- Per-issue sparkline and installs-affected read only this index, never the event blobs.
        CREATE INDEX IF NOT EXISTS web_occurrences_issue_time ON occurrences(issue_id, timestamp, install_id);
        CREATE INDEX IF NOT EXISTS web_issues_project_seen ON issues(project_id, last_seen, id);
        CREATE INDEX IF NOT EXISTS web_items_type_id ON items(project_id, type, id);
        """
}
