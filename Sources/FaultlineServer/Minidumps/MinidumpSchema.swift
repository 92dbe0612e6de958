// The modules of each stored minidump, in each store's dialect (schema migration 14): which
// occurrences came from a dump that loaded a build-id, so the backfill finds the dumps to walk
// again when a file for it arrives (MinidumpRewalk). The dump itself is an attachment of its
// occurrence (Attachments/, `event.minidump`); both go when the occurrence goes: a trigger in
// SQLite, a cascading foreign key in PostgreSQL.
import Foundation

enum SQLiteMinidumpSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS minidump_modules(
            build_id TEXT NOT NULL, occurrence_id INTEGER NOT NULL, PRIMARY KEY(build_id, occurrence_id)) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS minidump_modules_occurrence ON minidump_modules(occurrence_id);
        CREATE TRIGGER IF NOT EXISTS minidump_modules_with_occurrence AFTER DELETE ON occurrences
        BEGIN DELETE FROM minidump_modules WHERE occurrence_id = OLD.id; END
        """
}

enum PostgresMinidumpSchema {
    static let statements = """
        CREATE TABLE IF NOT EXISTS minidump_modules(
            build_id TEXT NOT NULL, occurrence_id BIGINT NOT NULL REFERENCES occurrences(id) ON DELETE CASCADE,
            PRIMARY KEY(build_id, occurrence_id));
        CREATE INDEX IF NOT EXISTS minidump_modules_occurrence ON minidump_modules(occurrence_id)
        """
}
