// The SQL both stores speak, for the parts written once over both (the web pages' queries, traces,
// log archives): a session runs one statement with "?" (or "?N") placeholders and values sent
// separately — SQLite binds them as they are, PostgreSQL gets them renumbered as "$N" — and a
// database hands out one read or one write transaction. Schema text stays per store (the types
// differ); statements that differ by more than placeholders go through `SQLDialect`. A parameter
// whose type PostgreSQL cannot infer (`? IS NULL`, or a double compared with an integer column)
// is written `CAST(? AS BIGINT | TEXT | DOUBLE PRECISION)`, which both read the same way.
import Foundation
import Synchronization

/// Where the two dialects differ inside a statement both stores run.
enum SQLDialect: Sendable {
    case sqlite, postgres

    /// The larger of two values: SQLite's two-argument `max`, PostgreSQL's `greatest`.
    var greatest: String { self == .sqlite ? "max" : "greatest" }

    /// The size in bytes of a blob column: `length` (of a BLOB) / `octet_length`.
    var byteLength: String { self == .sqlite ? "length" : "octet_length" }

    /// `instr` / `strpos`: the 1-based position of a substring, 0 when absent.
    var position: String { self == .sqlite ? "instr" : "strpos" }

    /// Days since the epoch of a column of seconds (PostgreSQL's integer cast rounds, SQLite's truncates).
    func day(_ column: String) -> String {
        self == .sqlite ? "CAST(\(column) / 86400 AS INTEGER)" : "floor(\(column) / 86400)::bigint"
    }
}

protocol SQLSession {
    /// Runs one statement; calls `row` for each result row; returns the rows changed (or returned).
    @discardableResult
    func execute(_ sql: String, _ args: [SQLValue], row: ((any SQLRow) throws -> Void)?) throws -> Int
}

extension SQLSession {
    @discardableResult
    func execute(_ sql: String, _ args: SQLValue...) throws -> Int { try execute(sql, args, row: nil) }

    func rows<T>(_ sql: String, _ args: [SQLValue], _ map: (any SQLRow) throws -> T) throws -> [T] {
        try withoutActuallyEscaping(map) { map in
            var out: [T] = []
            try execute(sql, args) { out.append(try map($0)) }
            return out
        }
    }

    func rows<T>(_ sql: String, _ args: SQLValue..., map: (any SQLRow) throws -> T) throws -> [T] { try rows(sql, args, map) }

    func first<T>(_ sql: String, _ args: SQLValue..., map: (any SQLRow) throws -> T) throws -> T? { try rows(sql, args, map).first }
}

protocol SQLDatabase: AnyObject, Sendable {
    var dialect: SQLDialect { get }
    /// One read transaction: every statement in `body` sees one snapshot.
    func reading<T>(_ body: (any SQLSession) throws -> T) throws -> T
    /// One write transaction, committed before this returns.
    func writing<T>(_ body: @escaping (any SQLSession) throws -> T) throws -> T
}

extension SQLiteConnection: SQLSession {
    func execute(_ sql: String, _ args: [SQLValue], row: ((any SQLRow) throws -> Void)?) throws -> Int {
        guard let row else { return try run(sql, args) }
        var n = 0
        try query(sql, args) {
            n += 1; try row($0)
        }
        return n
    }
}

extension PGConnection: SQLSession {
    func execute(_ sql: String, _ args: [SQLValue], row: ((any SQLRow) throws -> Void)?) throws -> Int {
        try query(PostgresPlaceholders.numbered(sql), args, row: row.map { r in { try r($0) } })
    }
}

extension SQLiteStore: SQLDatabase {
    var dialect: SQLDialect { .sqlite }
    func reading<T>(_ body: (any SQLSession) throws -> T) throws -> T { try read(body) }
    func writing<T>(_ body: @escaping (any SQLSession) throws -> T) throws -> T { try writer.sync(body) }
}

extension PostgresStore: SQLDatabase {
    var dialect: SQLDialect { .postgres }
    func reading<T>(_ body: (any SQLSession) throws -> T) throws -> T { try read(body) }
    func writing<T>(_ body: @escaping (any SQLSession) throws -> T) throws -> T { try write(body) }
}

/// "?" → "$1", "$2", … in order, "?N" → "$N"; nothing inside quotes changes. Cached per text.
enum PostgresPlaceholders {
    private static let cache = Mutex<[String: String]>([:])

    static func numbered(_ sql: String) -> String {
        if let s = cache.withLock({ $0[sql] }) { return s }
        var out = "", next = 0, quote: Character?
        var chars = sql.makeIterator(), pending: Character? = nil
        while let c = pending ?? chars.next() {
            pending = nil
            if let q = quote {
                out.append(c)
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c; out.append(c)
            } else if c == "?" {
                var digits = ""
                while let d = chars.next() {
                    if d.isASCII && d.isNumber { digits.append(d) } else { pending = d; break }
                }
                if digits.isEmpty { next += 1; digits = String(next) }
                out += "$" + digits
            } else {
                out.append(c)
            }
        }
        cache.withLock { $0[sql] = out }
        return out
    }
}

/// A store reached in SQL (SQLiteStore, PostgresStore). The operations written once over
/// `SQLDatabase` (debug-file records, traces, log archives) are provided to both through
/// extensions of this protocol, so each is stated once, not forwarded per store.
public protocol SQLBackedStore: AnyObject {
    var sqlBacking: SQLBacking { get }
}

/// What the shared statements run on; opaque outside the server library.
public struct SQLBacking {
    let database: any SQLDatabase
    let credentials: CredentialCache
}

extension SQLiteStore: SQLBackedStore {
    public var sqlBacking: SQLBacking { SQLBacking(database: self, credentials: credentials) }
}

extension PostgresStore: SQLBackedStore {
    public var sqlBacking: SQLBacking { SQLBacking(database: self, credentials: credentials) }
}
