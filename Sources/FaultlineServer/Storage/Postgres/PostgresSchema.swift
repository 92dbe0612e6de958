// The PostgreSQL schema and its versions: the same tables, columns and version numbers as
// SQLiteSchema (a migration added there is added here with the same index), in PostgreSQL's types.
//
// `faultline_schema.version` records the schema a database has. Every node runs `migrate` at start,
// inside one transaction holding a transaction-level advisory lock, so two nodes starting at once
// apply each migration once and the second sees the first's result. A database from a newer
// Faultline is refused and left as it is.
enum PostgresSchema {
    /// The version this binary writes and reads: always SQLite's, the two move together.
    static var version: Int { 1 + migrations.count }

    /// Migration i (0-based) takes a database from version i + 1 to i + 2. Append, never edit.
    static let migrations: [String] = [
        // 2: claims, the grouping/backfill exclusion held in the store (Store.acquireClaim).
        "CREATE TABLE claims(name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires DOUBLE PRECISION NOT NULL)",
        // 3: backfills as jobs with a lease (BackfillJobs), and the indexes retention deletes by.
        """
        ALTER TABLE backfills ADD COLUMN holder TEXT;
        ALTER TABLE backfills ADD COLUMN lease_expires DOUBLE PRECISION;
        ALTER TABLE backfills ADD COLUMN resume_after TEXT;
        CREATE INDEX backfills_open ON backfills(state, id);
        CREATE INDEX occurrences_received ON occurrences(received);
        CREATE INDEX items_received ON items(received)
        """,
        // 4: the per-install cap's windows (InstallWindows), so the cap survives restarts and,
        // on a shared database, holds across nodes.
        """
        CREATE TABLE install_windows(project_id BIGINT NOT NULL, install_id TEXT NOT NULL,
          window_start DOUBLE PRECISION NOT NULL, count BIGINT NOT NULL, PRIMARY KEY(project_id, install_id));
        CREATE INDEX install_windows_start ON install_windows(window_start)
        """,
        // 5: the tables of traces, log archives and the web pages (Traces/, LogArchives/, Web/).
        PostgresTraceSchema.statements + PostgresLogArchiveSchema.statements + PostgresWebSchema.statements,
        // 6: an issue's occurrences are also the rows naming issues merged into it (IssueGroups): a
        // merge no longer moves rows, so a binary from before this would lose them from its reads and
        // recounts — hence the version. Every per-issue read looks merged issues up by merged_into.
        "CREATE INDEX IF NOT EXISTS issues_merged ON issues(merged_into) WHERE merged_into IS NOT NULL",
        // 7: no table changes. The `event` column may now hold a client's gzip'd envelope
        // (StoredEvent), which an older binary would misread (as JSON): the version bump makes
        // older binaries refuse the database instead.
        "SELECT 1",
        // 8: the issue lifecycle (status details, releases, deploys) and alerts (Lifecycle/, Alerts/).
        PostgresLifecycleSchema.statements,
        // 9: issue assignees and comments (Lifecycle/IssueNotes).
        PostgresIssueNotesSchema.statements,
        // 10: browser sessions, shared by every node on the database (Web/WebSessions).
        PostgresWebSessionSchema.statements,
        // 11: envelope attachments, kept with their occurrence and deleted with it (Attachments/).
        PostgresAttachmentSchema.statements,
        // 12: each project's settings: its grouping rules (GroupingConfig; the projects that exist
        // now keep version 1, the rules they were grouped by) and whether frame variables are kept.
        """
        CREATE TABLE IF NOT EXISTS project_settings(
            project_id BIGINT PRIMARY KEY, grouping INTEGER NOT NULL, keep_frame_variables INTEGER NOT NULL DEFAULT 0);
        INSERT INTO project_settings(project_id, grouping) SELECT id, 1 FROM projects WHERE true ON CONFLICT(project_id) DO NOTHING
        """,
        // 13: each trace's span count, from which the span cap is claimed (Traces/TraceSpanCountSchema).
        PostgresTraceSpanCountSchema.statements,
        // 14: the modules of each stored minidump, for the backfill that walks it again (Minidumps/).
        PostgresMinidumpSchema.statements,
        // 15: each occurrence's environment and OS, and the tags grouping has seen per stack (the
        // issue page's breakdown, the issues search's `key:value`: Web/WebBreakdownSchema).
        PostgresWebBreakdownSchema.statements,
        // 16: a stored event's bytes are compressed already (StoredEvent): PostgreSQL keeps them out
        // of line as they are instead of trying to compress them again on every insert.
        "ALTER TABLE occurrences ALTER COLUMN event SET STORAGE EXTERNAL",
        // 17: each release's first and last event and the issues it brought (Lifecycle/ReleaseActivity).
        ReleaseActivity.migration(.postgres),
        // 18: the address an event came from, kept only when the event asks for it (`{{auto}}`:
        // Ingest/InferredIPAddress), filled in where the event is read.
        // And whether a project keeps it (`faultline projects ip-addresses`; on by default).
        """
        ALTER TABLE occurrences ADD COLUMN IF NOT EXISTS client_address TEXT;
        ALTER TABLE project_settings ADD COLUMN IF NOT EXISTS store_ip_addresses INTEGER NOT NULL DEFAULT 1
        """,
        // 19: the pages' per-stack tables indexed by stack, deleted with their stack (Web/WebStackKeySchema).
        WebStackKeySchema.statements
    ]

    /// Key of the advisory lock migrations hold ("faultln" in ASCII).
    static let migrationLock: Int64 = 0x6661_756C_746C_6E

    static func migrate(_ pool: PostgresPool) throws {
        try pool.transaction { c in
            try c.query("SELECT pg_advisory_xact_lock($1)", .int(migrationLock))
            try c.exec("SET LOCAL client_min_messages = warning")  // no "already exists, skipping" notices
            try c.exec("CREATE TABLE IF NOT EXISTS faultline_schema(version INTEGER NOT NULL)")
            var found = 0
            try c.query("SELECT version FROM faultline_schema") { found = Int($0.int(0)) }
            guard found <= version else {
                throw StoreError.newerSchema(path: PostgresURL.redacted(pool.url), found: found, supported: version)
            }
            try c.exec(statements)
            for (i, m) in migrations.enumerated() where i + 2 > found { try c.exec(m) }
            if try c.query("UPDATE faultline_schema SET version = $1", .int(Int64(version))) == 0 {
                try c.query("INSERT INTO faultline_schema(version) VALUES($1)", .int(Int64(version)))
            }
        }
    }

    /// Version 1 (SQLiteSchema.statements in PostgreSQL's dialect).
    static let statements = """
        CREATE TABLE IF NOT EXISTS projects(
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
            created DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS public_keys(
            key TEXT PRIMARY KEY, project_id BIGINT NOT NULL REFERENCES projects(id),
            app_ids TEXT NOT NULL DEFAULT '', created DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS server_tokens(
            hash TEXT PRIMARY KEY, name TEXT NOT NULL, prefix TEXT NOT NULL, created DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS occurrences(
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, project_id BIGINT NOT NULL, event_id TEXT NOT NULL,
            received DOUBLE PRECISION NOT NULL, timestamp DOUBLE PRECISION NOT NULL, release TEXT, install_id TEXT,
            event BYTEA NOT NULL, processed INTEGER NOT NULL DEFAULT 0,
            issue_id BIGINT, stack_key TEXT,
            UNIQUE(project_id, event_id));
        CREATE INDEX IF NOT EXISTS occurrences_unprocessed ON occurrences(id) WHERE processed = 0;
        CREATE INDEX IF NOT EXISTS occurrences_issue ON occurrences(issue_id, id);
        CREATE INDEX IF NOT EXISTS occurrences_stack ON occurrences(stack_key, project_id, issue_id);
        CREATE TABLE IF NOT EXISTS stacks(key TEXT PRIMARY KEY, signature BYTEA NOT NULL);
        CREATE TABLE IF NOT EXISTS stack_modules(
            build_id TEXT NOT NULL, stack_key TEXT NOT NULL, PRIMARY KEY(build_id, stack_key));
        CREATE TABLE IF NOT EXISTS issues(
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, project_id BIGINT NOT NULL, fingerprint TEXT NOT NULL,
            title TEXT NOT NULL, culprit TEXT NOT NULL, first_seen DOUBLE PRECISION NOT NULL, last_seen DOUBLE PRECISION NOT NULL,
            count BIGINT NOT NULL DEFAULT 0, symbolicated INTEGER NOT NULL DEFAULT 0, merged_into BIGINT,
            UNIQUE(project_id, fingerprint));
        CREATE TABLE IF NOT EXISTS issue_releases(
            issue_id BIGINT NOT NULL, release TEXT NOT NULL, PRIMARY KEY(issue_id, release));
        CREATE TABLE IF NOT EXISTS items(
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, project_id BIGINT NOT NULL, type TEXT NOT NULL,
            received DOUBLE PRECISION NOT NULL, payload BYTEA NOT NULL);
        CREATE INDEX IF NOT EXISTS items_type ON items(project_id, type);
        CREATE TABLE IF NOT EXISTS session_counts(
            project_id BIGINT PRIMARY KEY, total BIGINT NOT NULL DEFAULT 0, crashed BIGINT NOT NULL DEFAULT 0);
        CREATE TABLE IF NOT EXISTS debug_files(
            build_id TEXT PRIMARY KEY, has_debug_info INTEGER NOT NULL, has_symbols INTEGER NOT NULL,
            is_executable INTEGER NOT NULL, size BIGINT NOT NULL, name TEXT NOT NULL, uploaded DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS uploads(
            checksum TEXT PRIMARY KEY, build_id TEXT NOT NULL, uploaded DOUBLE PRECISION NOT NULL);
        CREATE TABLE IF NOT EXISTS backfills(
            id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, build_id TEXT NOT NULL, state TEXT NOT NULL,
            stacks BIGINT NOT NULL DEFAULT 0, occurrences BIGINT NOT NULL DEFAULT 0, occurrences_done BIGINT NOT NULL DEFAULT 0,
            addresses BIGINT NOT NULL DEFAULT 0, issues_merged BIGINT NOT NULL DEFAULT 0,
            started DOUBLE PRECISION NOT NULL, finished DOUBLE PRECISION);
        CREATE TABLE IF NOT EXISTS backfill_outcomes(
            backfill_id BIGINT PRIMARY KEY, occurrences_symbolicated BIGINT NOT NULL DEFAULT 0,
            merges TEXT NOT NULL DEFAULT '', error TEXT);
        CREATE TABLE IF NOT EXISTS source_files(
            build_id TEXT NOT NULL, path TEXT NOT NULL, sha1 TEXT NOT NULL, size BIGINT NOT NULL,
            PRIMARY KEY(build_id, path));
        CREATE INDEX IF NOT EXISTS backfills_build_id ON backfills(build_id, id);
        """
}
