// A thin, typed wrapper over one SQLite connection (statements cached by SQL text).
import Foundation
import CSQLite

let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

public struct SQLiteError: Error, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public var description: String { "SQLite error \(code): \(message)" }
}

/// Values we bind and read; blobs stay `Data`, text stays `String`.
enum SQLValue {
    case null, int(Int64), double(Double), text(String), blob(Data)
}

/// Not thread-safe: each connection is used by one thread at a time (callers hold a lock).
final class SQLiteConnection: @unchecked Sendable {
    let db: OpaquePointer
    private var cache: [String: OpaquePointer] = [:]

    /// - Parameter vfs: a VFS by name (nil: SQLite's default), e.g. the writer's WAL-coalescing one.
    init(path: String, readOnly: Bool = false, vfs: String? = nil) throws {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &handle, flags, vfs)
        guard rc == SQLITE_OK, let h = handle else {
            let msg = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let h = handle { sqlite3_close(h) }
            throw SQLiteError(code: rc, message: "\(msg) (\(path))")
        }
        db = h
        sqlite3_busy_timeout(db, 10_000)
    }

    deinit {
        for (_, s) in cache { sqlite3_finalize(s) }
        sqlite3_close_v2(db)
    }

    func error(_ rc: Int32) -> SQLiteError { SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(db))) }

    func exec(_ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &err)
        if rc != SQLITE_OK {
            let msg = err.map { String(cString: $0) } ?? "?"
            sqlite3_free(err)
            throw SQLiteError(code: rc, message: msg)
        }
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let s = cache[sql] { return s }
        var s: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &s, nil)
        guard rc == SQLITE_OK, let stmt = s else { throw error(rc) }
        cache[sql] = stmt
        return stmt
    }

    private func bind(_ stmt: OpaquePointer, _ args: [SQLValue]) throws {
        for (i, a) in args.enumerated() {
            let idx = Int32(i + 1)
            let rc: Int32
            switch a {
            case .null: rc = sqlite3_bind_null(stmt, idx)
            case .int(let v): rc = sqlite3_bind_int64(stmt, idx, v)
            case .double(let v): rc = sqlite3_bind_double(stmt, idx, v)
            case .text(let v): rc = sqlite3_bind_text(stmt, idx, v, -1, SQLITE_TRANSIENT)
            case .blob(let v):
                rc = v.withUnsafeBytes {
                    sqlite3_bind_blob64(stmt, idx, $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64($0.count), SQLITE_TRANSIENT)
                }
            }
            if rc != SQLITE_OK { throw error(rc) }
        }
    }

    /// Runs a statement that returns no rows; returns the number of changed rows.
    @discardableResult
    func run(_ sql: String, _ args: SQLValue...) throws -> Int {
        try run(sql, args)
    }

    @discardableResult
    func run(_ sql: String, _ args: [SQLValue]) throws -> Int {
        let stmt = try statement(sql)
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        try bind(stmt, args)
        var rc = sqlite3_step(stmt)
        while rc == SQLITE_ROW { rc = sqlite3_step(stmt) }
        guard rc == SQLITE_DONE else { throw error(rc) }
        return Int(sqlite3_changes(db))
    }

    var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(db) }

    /// Iterates rows; the row accessor is valid only inside the closure.
    func query(_ sql: String, _ args: SQLValue..., row: (SQLiteRow) throws -> Void) throws {
        try query(sql, args, row: row)
    }

    func query(_ sql: String, _ args: [SQLValue], row: (SQLiteRow) throws -> Void) throws {
        let stmt = try statement(sql)
        defer { sqlite3_reset(stmt); sqlite3_clear_bindings(stmt) }
        try bind(stmt, args)
        while true {
            let rc = sqlite3_step(stmt)
            if rc == SQLITE_DONE { break }
            guard rc == SQLITE_ROW else { throw error(rc) }
            try row(SQLiteRow(stmt: stmt))
        }
    }

    func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN IMMEDIATE")
        do {
            let v = try body()
            try run("COMMIT")
            return v
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }
}

struct SQLiteRow {
    let stmt: OpaquePointer
    func int(_ i: Int32) -> Int64 { sqlite3_column_int64(stmt, i) }
    func double(_ i: Int32) -> Double { sqlite3_column_double(stmt, i) }
    func isNull(_ i: Int32) -> Bool { sqlite3_column_type(stmt, i) == SQLITE_NULL }
    func text(_ i: Int32) -> String? {
        guard let p = sqlite3_column_text(stmt, i) else { return nil }
        return String(cString: p)
    }
    func blob(_ i: Int32) -> Data {
        let n = Int(sqlite3_column_bytes(stmt, i))
        guard n > 0, let p = sqlite3_column_blob(stmt, i) else { return Data() }
        return Data(bytes: p, count: n)
    }
}
