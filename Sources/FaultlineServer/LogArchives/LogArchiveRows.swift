// What both log-archive stores select and insert, and how a row becomes a record: one column
// list and one mapping for SQLite and PostgreSQL.
import Foundation

enum LogArchiveRows {
    static let columns = "id, project_id, install_id, app_id, release, client_name, sha256, compressed_bytes, uncompressed_bytes, lines, received, storage_name"
    static let insertColumns =
        "project_id, install_id, app_id, release, client_name, sha256, compressed_bytes, uncompressed_bytes, lines, received, storage_name"

    static func archive(_ r: any SQLRow) -> LogArchiveRecord {
        LogArchiveRecord(
            id: r.int(0), projectID: r.int(1), installID: r.text(2) ?? "", appID: r.text(3), release: r.text(4),
            clientName: r.text(5) ?? "", sha256: r.text(6) ?? "", compressedBytes: r.int(7), uncompressedBytes: r.int(8),
            lines: r.int(9), received: r.double(10), storageName: r.text(11) ?? "")
    }

    static func values(_ a: LogArchiveRecord) -> [SQLValue] {
        [
            .int(a.projectID), .text(a.installID), .nullable(a.appID), .nullable(a.release), .text(a.clientName), .text(a.sha256),
            .int(a.compressedBytes), .int(a.uncompressedBytes), .int(a.lines), .double(a.received), .text(a.storageName)
        ]
    }

    /// The filter's values in the order both stores' list query numbers them (1–6).
    static func filterValues(_ f: LogArchiveFilter) -> [SQLValue] {
        [
            f.projectID.map { .int($0) } ?? .null, .nullable(f.installID), .nullable(f.release),
            f.since.map { .double($0) } ?? .null, .int(Int64(f.limit)), .int(Int64(f.offset))
        ]
    }

    static func rule(_ r: any SQLRow) -> LogUploadRule? {
        LogUploadRule.Scope(rawValue: r.text(1) ?? "").map {
            LogUploadRule(projectID: r.int(0), scope: $0, value: r.text(2) ?? "", enabled: r.int(3) != 0, changed: r.double(4))
        }
    }
}
