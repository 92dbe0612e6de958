// Debug-file metadata, upload checksums, bundled source files and the stacks a build-id appears
// in: `Store` operations that are the same statements on both stores, written once over
// `SQLDatabase`. The stores' own files forward here.
import Foundation
import FaultlineProtocol

enum SQLDebugFileRecords {
    static func record(_ db: some SQLDatabase, _ d: DebugFileRecord) throws {
        let greatest = db.dialect.greatest
        _ = try db.writing { c in
            try c.execute(
                """
                INSERT INTO debug_files(build_id, has_debug_info, has_symbols, is_executable, size, name, uploaded)
                VALUES(?, ?, ?, ?, ?, ?, ?) ON CONFLICT(build_id) DO UPDATE SET
                  has_debug_info = \(greatest)(debug_files.has_debug_info, excluded.has_debug_info),
                  has_symbols = \(greatest)(debug_files.has_symbols, excluded.has_symbols),
                  is_executable = \(greatest)(debug_files.is_executable, excluded.is_executable),
                  size = excluded.size, name = excluded.name, uploaded = excluded.uploaded
                """, .text(d.buildID.hex), .int(d.hasDebugInfo ? 1 : 0), .int(d.hasSymbols ? 1 : 0), .int(d.isExecutable ? 1 : 0),
                .int(d.size), .text(d.name), .double(d.uploaded))
        }
    }

    static let columns = "build_id, has_debug_info, has_symbols, is_executable, size, name, uploaded"

    static func debugFile(_ r: any SQLRow) -> DebugFileRecord? {
        guard let b = r.text(0).flatMap(BuildID.init(hex:)) else { return nil }
        return DebugFileRecord(
            buildID: b, hasDebugInfo: r.int(1) != 0, hasSymbols: r.int(2) != 0, isExecutable: r.int(3) != 0,
            size: r.int(4), name: r.text(5) ?? "", uploaded: r.double(6))
    }

    static func debugFile(_ db: some SQLDatabase, buildID: BuildID) throws -> DebugFileRecord? {
        try db.reading { c in try c.first("SELECT \(columns) FROM debug_files WHERE build_id = ?", .text(buildID.hex), map: debugFile) ?? nil }
    }

    static func debugFiles(_ db: some SQLDatabase) throws -> [DebugFileRecord] {
        try db.reading { c in try c.rows("SELECT \(columns) FROM debug_files ORDER BY uploaded, build_id", map: debugFile).compactMap { $0 } }
    }

    static func recordUpload(_ db: some SQLDatabase, checksum: String, buildID: BuildID) throws {
        _ = try db.writing { c in
            try c.execute(
                "INSERT INTO uploads(checksum, build_id, uploaded) VALUES(?, ?, ?) ON CONFLICT DO NOTHING",
                .text(checksum), .text(buildID.hex), .double(Date().timeIntervalSince1970))
        }
    }

    static func uploadedBuildID(_ db: some SQLDatabase, checksum: String) throws -> BuildID? {
        try db.reading { c in
            try c.first("SELECT build_id FROM uploads WHERE checksum = ?", .text(checksum)) { $0.text(0).flatMap(BuildID.init(hex:)) } ?? nil
        }
    }

    static func recordSourceFiles(_ db: some SQLDatabase, buildID: BuildID, _ files: [SourceFileRecord]) throws {
        try db.writing { c in
            for f in files {
                try c.execute(
                    """
                    INSERT INTO source_files(build_id, path, sha1, size) VALUES(?, ?, ?, ?)
                    ON CONFLICT(build_id, path) DO UPDATE SET sha1 = excluded.sha1, size = excluded.size
                    """, .text(buildID.hex), .text(f.path), .text(f.sha1), .int(f.size))
            }
        }
    }

    static func sourceFile(_ db: some SQLDatabase, buildID: BuildID, path: String) throws -> SourceFileRecord? {
        try db.reading { c in
            try c.first("SELECT path, sha1, size FROM source_files WHERE build_id = ? AND path = ?", .text(buildID.hex), .text(path)) {
                SourceFileRecord(path: $0.text(0) ?? "", sha1: $0.text(1) ?? "", size: $0.int(2))
            }
        }
    }

    static func stacks(_ db: some SQLDatabase, referencing buildID: BuildID) throws -> [StoredStack] {
        try db.reading { c in
            // Counted in stack-key order from the (stack_key, project_id, issue_id) index alone, signatures
            // joined after: grouping by the signature blob sorted 100,000 rows with their blobs (0.3 s).
            try c.rows(
                """
                SELECT n.stack_key, s.signature, n.project_id, n.occurrences FROM
                  (SELECT m.stack_key, o.project_id, count(*) AS occurrences FROM stack_modules m
                   JOIN occurrences o ON o.stack_key = m.stack_key WHERE m.build_id = ? GROUP BY m.stack_key, o.project_id) AS n
                JOIN stacks s ON s.key = n.stack_key
                """, .text(buildID.hex)
            ) { r in
                StoredStack(signature: r.blob(1), projectID: r.int(2), occurrences: r.int(3))
            }
        }
    }
}

/// The `DebugFileRecordStore` operations above (and `BackfillJobs.stacks`), for both stores.
extension SQLBackedStore {
    private var db: any SQLDatabase { sqlBacking.database }
    public func recordDebugFile(_ d: DebugFileRecord) throws { try SQLDebugFileRecords.record(db, d) }
    public func debugFile(buildID: BuildID) throws -> DebugFileRecord? { try SQLDebugFileRecords.debugFile(db, buildID: buildID) }
    public func debugFiles() throws -> [DebugFileRecord] { try SQLDebugFileRecords.debugFiles(db) }
    public func recordUpload(checksum: String, buildID: BuildID) throws { try SQLDebugFileRecords.recordUpload(db, checksum: checksum, buildID: buildID) }
    public func uploadedBuildID(checksum: String) throws -> BuildID? { try SQLDebugFileRecords.uploadedBuildID(db, checksum: checksum) }
    public func recordSourceFiles(buildID: BuildID, _ files: [SourceFileRecord]) throws {
        try SQLDebugFileRecords.recordSourceFiles(db, buildID: buildID, files)
    }
    public func sourceFile(buildID: BuildID, path: String) throws -> SourceFileRecord? { try SQLDebugFileRecords.sourceFile(db, buildID: buildID, path: path) }
    public func stacks(referencing buildID: BuildID) throws -> [StoredStack] { try SQLDebugFileRecords.stacks(db, referencing: buildID) }
}

extension SQLiteStore: DebugFileRecordStore {}
extension PostgresStore: DebugFileRecordStore {}
