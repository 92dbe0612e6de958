// `AttachmentStore` for both stores, and the insert `storeIngest` runs in its own transaction.
import Foundation

enum SQLAttachmentStore {
    static let insertSQL = """
        INSERT INTO attachments(occurrence_id, project_id, filename, content_type, attachment_type, size, data)
        VALUES(?, ?, ?, ?, ?, ?, ?)
        """

    static func insertValues(_ occurrenceID: Int64, _ projectID: Int64, _ a: IncomingAttachment) -> [SQLValue] {
        [
            .int(occurrenceID), .int(projectID), .text(a.filename), .nullable(a.contentType), .nullable(a.attachmentType),
            .int(Int64(a.data.count)), .blob(a.data)
        ]
    }

    static let columns = "id, occurrence_id, project_id, filename, content_type, attachment_type, size"

    static func record(_ r: any SQLRow) -> AttachmentRecord {
        AttachmentRecord(
            id: r.int(0), occurrenceID: r.int(1), projectID: r.int(2), filename: r.text(3) ?? "", contentType: r.text(4),
            attachmentType: r.text(5), size: r.int(6))
    }
}

extension SQLBackedStore {
    public func attachments(occurrenceID: Int64) throws -> [AttachmentRecord] {
        try sqlBacking.database.reading { c in
            try c.rows(
                "SELECT \(SQLAttachmentStore.columns) FROM attachments WHERE occurrence_id = ? ORDER BY id", .int(occurrenceID),
                map: SQLAttachmentStore.record)
        }
    }

    public func attachment(id: Int64, occurrenceID: Int64) throws -> (AttachmentRecord, Data)? {
        try sqlBacking.database.reading { c in
            try c.first(
                "SELECT \(SQLAttachmentStore.columns), data FROM attachments WHERE id = ? AND occurrence_id = ?", .int(id), .int(occurrenceID)
            ) { (SQLAttachmentStore.record($0), $0.blob(7)) }
        }
    }
}

extension SQLiteStore: AttachmentStore {}
extension PostgresStore: AttachmentStore {}
