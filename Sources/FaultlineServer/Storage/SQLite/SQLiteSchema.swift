// The SQLite schema and its versions. Raw events are stored first; grouping fills in issue and stack.
//
// `PRAGMA user_version` records the schema a database has. At open: a database from a newer
// Faultline is refused (an older binary must never stamp it with its own version); version 1's
// statements run every time (they only create what is missing: tables added within version 1, like
// `backfill_outcomes` and `source_files`, reach older data directories this way); then each
// explicit migration above the database's version runs once, in order, in a transaction.
import Foundation

enum SQLiteSchema {
    /// The version this binary writes and reads.
    static var version: Int { 1 + migrations.count }

    /// Migration i (0-based) takes a database from version i + 1 to i + 2. Append, never edit.
    static let migrations: [String] = [
        // 2: claims, the grouping/backfill exclusion held in the store (Store.acquireClaim).
        "CREATE TABLE claims(name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires REAL NOT NULL) WITHOUT ROWID",
        // 3: backfills as jobs with a lease (BackfillJobs), and the indexes retention deletes by.
        """
        ALTER TABLE backfills ADD COLUMN holder TEXT;
        ALTER TABLE backfills ADD COLUMN lease_expires REAL;
        ALTER TABLE backfills ADD COLUMN resume_after TEXT;
        CREATE INDEX backfills_open ON backfills(state, id);
        CREATE INDEX occurrences_received ON occurrences(received);
        CREATE INDEX items_received ON items(received)
        """,
        // 4: the per-install cap's windows (InstallWindows), so the cap survives restarts and,
        // on a shared database, holds across nodes.
        """
        CREATE TABLE install_windows(project_id BIGINT NOT NULL, install_id TEXT NOT NULL,
          window_start REAL NOT NULL, count BIGINT NOT NULL, PRIMARY KEY(project_id, install_id)) WITHOUT ROWID;
        CREATE INDEX install_windows_start ON install_windows(window_start)
        """,
        // 5: the tables of traces, log archives and the web pages (Traces/, LogArchives/, Web/). IF NOT
        // EXISTS: data directories from before this migration made them on first use.
        TraceSchema.statements + SQLiteLogArchiveSchema.statements + SQLiteWebSchema.statements,
        // 6: an issue's occurrences are also the rows naming issues merged into it (IssueGroups): a
        // merge no longer moves rows, so a binary from before this would lose them from its reads and
        // recounts — hence the version. Merged issues are found by merged_into (version 1 has the index).
        "CREATE INDEX IF NOT EXISTS issues_merged ON issues(merged_into) WHERE merged_into IS NOT NULL",
        // 7: no table changes. The `event` column may now hold a client's gzip'd envelope
        // (StoredEvent), which an older binary would misread (as JSON): the version bump makes
        // older binaries refuse the database instead.
        "SELECT 1",
        // 8: the issue lifecycle (status details, releases, deploys) and alerts (Lifecycle/, Alerts/).
        SQLiteLifecycleSchema.statements,
        // 9: issue assignees and comments (Lifecycle/IssueNotes).
        SQLiteIssueNotesSchema.statements,
        // 10: browser sessions, shared by every node on the database (Web/WebSessions).
        SQLiteWebSessionSchema.statements,
        // 11: envelope attachments, kept with their occurrence and deleted with it (Attachments/).
        SQLiteAttachmentSchema.statements,
        // 12: each project's settings: its grouping rules (GroupingConfig; the projects that exist
        // now keep version 1, the rules they were grouped by) and whether frame variables are kept. (`WHERE true`: SQLite's parser needs it
        // between an INSERT's SELECT and ON CONFLICT.)
        """
        CREATE TABLE IF NOT EXISTS project_settings(
            project_id INTEGER PRIMARY KEY, grouping INTEGER NOT NULL, keep_frame_variables INTEGER NOT NULL DEFAULT 0);
        INSERT INTO project_settings(project_id, grouping) SELECT id, 1 FROM projects WHERE true ON CONFLICT(project_id) DO NOTHING
        """,
        // 13: each trace's span count, from which the span cap is claimed (Traces/TraceSpanCountSchema).
        SQLiteTraceSpanCountSchema.statements,
        // 14: the modules of each stored minidump, for the backfill that walks it again (Minidumps/).
        SQLiteMinidumpSchema.statements,
        // 15: each occurrence's environment and OS, and the tags grouping has seen per stack (the
        // issue page's breakdown, the issues search's `key:value`: Web/WebBreakdownSchema).
        SQLiteWebBreakdownSchema.statements,
        // 16: PostgreSQL stores an event's bytes without compressing them again; SQLite never
        // compresses, so nothing changes here (the versions move together).
        "SELECT 1",
        // 17: each release's first and last event and the issues it brought (Lifecycle/ReleaseActivity).
        ReleaseActivity.migration(.sqlite),
        // 18: the address an event came from, kept only when the event asks for it (`{{auto}}`:
        // Ingest/InferredIPAddress), filled in where the event is read.
        // And whether a project keeps it (`faultline projects ip-addresses`; on by default).
        """
        ALTER TABLE occurrences ADD COLUMN client_address TEXT;
        ALTER TABLE project_settings ADD COLUMN store_ip_addresses INTEGER NOT NULL DEFAULT 1;
        """,
        // 19: the pages' per-stack tables indexed by stack, deleted with their stack (Web/WebStackKeySchema).
        WebStackKeySchema.statements
    ]

    /// Brings the database on `c` to `version`, or throws `StoreError.newerSchema`.
    static func migrate(_ c: SQLiteConnection, path: String) throws {
        var found = 0
        try c.query("PRAGMA user_version") { found = Int($0.int(0)) }
        guard found <= version else { throw StoreError.newerSchema(path: path, found: found, supported: version) }
        try c.exec(statements)
        for (i, m) in migrations.enumerated() where i + 2 > found {
            try c.exec("BEGIN IMMEDIATE; \(try withoutColumnsPresent(m, c)); PRAGMA user_version=\(i + 2); COMMIT")
        }
        try c.exec("PRAGMA user_version=\(version)")
    }

    /// `migration` without its `ALTER TABLE t ADD COLUMN c …;` statements whose column `t` has
    /// already: SQLite has no `ADD COLUMN IF NOT EXISTS` (PostgreSQL's migrations say it), and a
    /// database whose version is older than its tables (stamped back by a test, or opened by an
    /// older binary's migration after a newer one's) must still open.
    static func withoutColumnsPresent(_ migration: String, _ c: SQLiteConnection) throws -> String {
        let pattern = try NSRegularExpression(pattern: #"ALTER TABLE (\w+) ADD COLUMN (\w+)[^;]*;?"#, options: [.caseInsensitive])
        var out = migration
        for match in pattern.matches(in: migration, range: NSRange(migration.startIndex..., in: migration)).reversed() {
            guard let whole = Range(match.range, in: migration), let table = Range(match.range(at: 1), in: migration),
                let column = Range(match.range(at: 2), in: migration)
            else { continue }
            var present = false
            try c.query("SELECT 1 FROM pragma_table_info(?) WHERE name = ?", .text(String(migration[table])), .text(String(migration[column]))) { _ in
                present = true
            }
            if present { out.replaceSubrange(whole, with: "") }
        }
        return out
    }

    /// Version 1.
    static let statements = """
        CREATE TABLE IF NOT EXISTS projects(
            id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL, created REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS public_keys(
            key TEXT PRIMARY KEY, project_id INTEGER NOT NULL REFERENCES projects(id),
            app_ids TEXT NOT NULL DEFAULT '', created REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS server_tokens(
            hash TEXT PRIMARY KEY, name TEXT NOT NULL, prefix TEXT NOT NULL, created REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS occurrences(
            id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, event_id TEXT NOT NULL,
            received REAL NOT NULL, timestamp REAL NOT NULL, release TEXT, install_id TEXT,
            event BLOB NOT NULL, processed INTEGER NOT NULL DEFAULT 0,
            issue_id INTEGER, stack_key TEXT,
            UNIQUE(project_id, event_id));
        CREATE INDEX IF NOT EXISTS occurrences_unprocessed ON occurrences(id) WHERE processed = 0;
        CREATE INDEX IF NOT EXISTS occurrences_issue ON occurrences(issue_id, id);
        CREATE INDEX IF NOT EXISTS occurrences_stack ON occurrences(stack_key, project_id, issue_id);
        CREATE TABLE IF NOT EXISTS stacks(key TEXT PRIMARY KEY, signature BLOB NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS stack_modules(
            build_id TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(build_id, stack_key)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS issues(
            id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, fingerprint TEXT NOT NULL,
            title TEXT NOT NULL, culprit TEXT NOT NULL, first_seen REAL NOT NULL, last_seen REAL NOT NULL,
            count INTEGER NOT NULL DEFAULT 0, symbolicated INTEGER NOT NULL DEFAULT 0, merged_into INTEGER,
            UNIQUE(project_id, fingerprint));
        -- Merged issues only (empty until a merge, so ingest never writes it): a merge re-points the
        -- issues merged into the one it empties, which without it scanned every issue per merge.
        CREATE INDEX IF NOT EXISTS issues_merged ON issues(merged_into) WHERE merged_into IS NOT NULL;
        CREATE TABLE IF NOT EXISTS issue_releases(
            issue_id INTEGER NOT NULL, release TEXT NOT NULL, PRIMARY KEY(issue_id, release)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS items(
            id INTEGER PRIMARY KEY, project_id INTEGER NOT NULL, type TEXT NOT NULL,
            received REAL NOT NULL, payload BLOB NOT NULL);
        CREATE INDEX IF NOT EXISTS items_type ON items(project_id, type);
        CREATE TABLE IF NOT EXISTS session_counts(
            project_id INTEGER PRIMARY KEY, total INTEGER NOT NULL DEFAULT 0, crashed INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE IF NOT EXISTS debug_files(
            build_id TEXT PRIMARY KEY, has_debug_info INTEGER NOT NULL, has_symbols INTEGER NOT NULL,
            is_executable INTEGER NOT NULL, size INTEGER NOT NULL, name TEXT NOT NULL, uploaded REAL NOT NULL);
        CREATE TABLE IF NOT EXISTS uploads(
            checksum TEXT PRIMARY KEY, build_id TEXT NOT NULL, uploaded REAL NOT NULL) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS backfills(
            id INTEGER PRIMARY KEY, build_id TEXT NOT NULL, state TEXT NOT NULL, stacks INTEGER NOT NULL DEFAULT 0,
            occurrences INTEGER NOT NULL DEFAULT 0, occurrences_done INTEGER NOT NULL DEFAULT 0,
            addresses INTEGER NOT NULL DEFAULT 0, issues_merged INTEGER NOT NULL DEFAULT 0,
            started REAL NOT NULL, finished REAL);
        -- What a finished or failed backfill did, for `faultline upload --wait`. A table of its own
        -- rather than new columns, so data directories made before it need no migration.
        CREATE TABLE IF NOT EXISTS backfill_outcomes(
            backfill_id INTEGER PRIMARY KEY, occurrences_symbolicated INTEGER NOT NULL DEFAULT 0,
            merges TEXT NOT NULL DEFAULT '', error TEXT);
        CREATE TABLE IF NOT EXISTS source_files(
            build_id TEXT NOT NULL, path TEXT NOT NULL, sha1 TEXT NOT NULL, size INTEGER NOT NULL,
            PRIMARY KEY(build_id, path)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS backfills_build_id ON backfills(build_id, id);
        """
}
