// Browser sessions in the database (schema migration 10), so that every node behind a load
// balancer knows every session and a logout on one ends it on all. Only a hash of the cookie is
// stored: read access to the database gives no live session.
enum SQLiteWebSessionSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS web_sessions(
            id_hash TEXT PRIMARY KEY, principal TEXT NOT NULL, expires REAL NOT NULL) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS web_sessions_expires ON web_sessions(expires)
        """
}

enum PostgresWebSessionSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS web_sessions(
            id_hash TEXT PRIMARY KEY, principal TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL);
        CREATE INDEX IF NOT EXISTS web_sessions_expires ON web_sessions(expires)
        """
}
