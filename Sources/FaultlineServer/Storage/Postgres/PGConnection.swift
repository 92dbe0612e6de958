// A thin, typed wrapper over libpq: one connection (statements prepared once per connection and
// keyed by their SQL text, parameters always sent separately — never spliced into SQL); the pool
// is PostgresPool.swift.
import Foundation
import CLibPQ

public struct PostgresError: Error, CustomStringConvertible {
    /// The five-character SQLSTATE ("40001", "23505", …), or "" when the failure is not the server's.
    public let sqlState: String
    public let message: String
    public var description: String { "PostgreSQL error\(sqlState.isEmpty ? "" : " \(sqlState)"): \(message)" }
    /// A serialization failure or deadlock: the transaction can be run again as a whole.
    var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
}

/// One result row in text format (bytea arrives as its escaped text and is unescaped on read).
struct PGRow {
    fileprivate let result: OpaquePointer
    fileprivate let row: Int32

    func isNull(_ i: Int32) -> Bool { PQgetisnull(result, row, i) != 0 }
    func text(_ i: Int32) -> String? { isNull(i) ? nil : String(cString: PQgetvalue(result, row, i)) }
    func int(_ i: Int32) -> Int64 { text(i).flatMap { Int64($0) } ?? 0 }
    func double(_ i: Int32) -> Double { text(i).flatMap { Double($0) } ?? 0 }
    func bool(_ i: Int32) -> Bool { text(i) == "t" }
    func blob(_ i: Int32) -> Data {
        guard !isNull(i), let v = PQgetvalue(result, row, i) else { return Data() }
        var n = 0
        guard let raw = v.withMemoryRebound(to: UInt8.self, capacity: 1, { PQunescapeBytea($0, &n) }) else { return Data() }
        defer { PQfreemem(raw) }
        return Data(bytes: raw, count: n)
    }
}

/// Not thread-safe: a connection belongs to one thread between `PostgresPool.take` and `give`.
final class PGConnection: @unchecked Sendable {
    private let conn: OpaquePointer
    private var prepared: [String: String] = [:]

    init(url: String) throws {
        guard let c = PQconnectdb(url) else { throw PostgresError(sqlState: "", message: "out of memory connecting") }
        guard PQstatus(c) == CONNECTION_OK else {
            let msg = String(cString: PQerrorMessage(c)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(c)
            throw PostgresError(sqlState: "", message: "cannot connect to \(PostgresURL.redacted(url)): \(msg)")
        }
        conn = c
    }

    deinit { PQfinish(conn) }

    var isBroken: Bool { PQstatus(conn) != CONNECTION_OK }

    private func check(_ r: OpaquePointer?) throws -> OpaquePointer {
        guard let r else { throw PostgresError(sqlState: "", message: String(cString: PQerrorMessage(conn))) }
        let status = PQresultStatus(r)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK { return r }
        let state = PQresultErrorField(r, 0x43 /* PG_DIAG_SQLSTATE 'C' */).map { String(cString: $0) } ?? ""
        let msg = String(cString: PQresultErrorMessage(r)).trimmingCharacters(in: .whitespacesAndNewlines)
        PQclear(r)
        throw PostgresError(sqlState: state, message: msg)
    }

    /// Runs SQL without parameters (several statements allowed): schema, BEGIN/COMMIT.
    func exec(_ sql: String) throws {
        PQclear(try check(PQexec(conn, sql)))
    }

    /// Runs one prepared statement with `params` ($1, $2, …) and calls `row` for each result row.
    /// Returns the number of rows affected (or returned).
    @discardableResult
    func query(_ sql: String, _ params: SQLValue..., row: ((PGRow) throws -> Void)? = nil) throws -> Int {
        try query(sql, params, row: row)
    }

    @discardableResult
    func query(_ sql: String, _ params: [SQLValue], row: ((PGRow) throws -> Void)? = nil) throws -> Int {
        let name: String
        if let n = prepared[sql] {
            name = n
        } else {
            name = "s\(prepared.count)"
            PQclear(try check(PQprepare(conn, name, sql, Int32(params.count), nil)))
            prepared[sql] = name
        }
        // Text parameters, except blobs which go in binary (no escaping at all).
        var buffers: [Data?] = []
        var formats: [Int32] = []
        for p in params {
            switch p {
            case .null: buffers.append(nil); formats.append(0)
            case .int(let v): buffers.append(Data(String(v).utf8) + [0]); formats.append(0)
            case .double(let v): buffers.append(Data("\(v)".utf8) + [0]); formats.append(0)
            case .text(let v):
                // PostgreSQL text holds no NUL character, and libpq would end the value at the first
                // one (a client's "\u0000" in a title): NUL becomes U+FFFD, the rest is kept.
                let bytes = v.utf8.contains(0) ? Data(v.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}").utf8) : Data(v.utf8)
                buffers.append(bytes + [0]); formats.append(0)
            case .blob(let v): buffers.append(v); formats.append(1)
            }
        }
        let lengths = buffers.map { Int32($0?.count ?? 0) }
        let pointers = buffers.map { d -> UnsafeMutablePointer<CChar>? in
            guard let d else { return nil }
            let p = UnsafeMutablePointer<CChar>.allocate(capacity: max(d.count, 1))
            d.withUnsafeBytes { raw in
                if let base = raw.baseAddress {
                    p.withMemoryRebound(to: UInt8.self, capacity: d.count) { $0.update(from: base.assumingMemoryBound(to: UInt8.self), count: d.count) }
                }
            }
            return p
        }
        defer { for p in pointers { p?.deallocate() } }
        let raw = pointers.map { UnsafePointer($0) }
        let r = try check(
            raw.withUnsafeBufferPointer { vals in
                lengths.withUnsafeBufferPointer { lens in
                    formats.withUnsafeBufferPointer { fmts in
                        PQexecPrepared(conn, name, Int32(params.count), vals.baseAddress, lens.baseAddress, fmts.baseAddress, 0)
                    }
                }
            })
        defer { PQclear(r) }
        let n = PQntuples(r)
        if let row {
            for i in 0..<n { try row(PGRow(result: r, row: i)) }
        }
        if PQresultStatus(r) == PGRES_TUPLES_OK { return Int(n) }
        return Int(String(cString: PQcmdTuples(r))) ?? 0
    }
}
