// What attachments are stored as and read back through. Ingest writes them in the transaction that
// stores their event (`IncomingEvent.attachments`, `storeIngest`), so an attachment never exists
// without its occurrence; this store only reads them.
import Foundation

/// An `attachment` envelope item as ingest keeps it: the client's header fields as sent (bounded,
/// never used as a path) and the payload.
public struct IncomingAttachment: Sendable {
    public var filename: String
    public var contentType: String?
    public var attachmentType: String?
    public var data: Data
    public init(filename: String, contentType: String?, attachmentType: String?, data: Data) {
        self.filename = filename; self.contentType = contentType; self.attachmentType = attachmentType; self.data = data
    }
}

/// A stored attachment without its bytes (what lists show).
public struct AttachmentRecord: Sendable, Equatable {
    public var id: Int64
    public var occurrenceID: Int64
    public var projectID: Int64
    public var filename: String
    public var contentType: String?
    public var attachmentType: String?
    public var size: Int64
}

public protocol AttachmentStore: AnyObject, Sendable {
    /// The attachments of one occurrence, in the order they came.
    func attachments(occurrenceID: Int64) throws -> [AttachmentRecord]
    /// One attachment and its bytes, only when it belongs to this occurrence (ids are guessable).
    func attachment(id: Int64, occurrenceID: Int64) throws -> (AttachmentRecord, Data)?
}
