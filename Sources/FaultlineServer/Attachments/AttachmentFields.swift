// What ingest keeps of an `attachment` item's header: `filename`, `content_type` and
// `attachment_type` as the client sent them, cut to a bounded length. The name is a label only —
// it is never joined to a path (attachments live in the database) and every reader escapes it
// (pages through `HTML.esc`, downloads through `AttachmentDownload.disposition`).
import Foundation
import FaultlineProtocol

enum AttachmentFields {
    static let maxFilenameBytes = 255
    static let maxTypeBytes = 128

    static func incoming(_ item: Envelope.Item) -> IncomingAttachment {
        IncomingAttachment(
            filename: bounded(item.header["filename"]?.stringValue, maxFilenameBytes) ?? "attachment",
            contentType: bounded(item.header["content_type"]?.stringValue, maxTypeBytes),
            attachmentType: bounded(item.header["attachment_type"]?.stringValue, maxTypeBytes),
            data: item.payload)
    }

    /// The text cut at a character boundary within `max` UTF-8 bytes; nil when absent or empty.
    static func bounded(_ s: String?, _ max: Int) -> String? {
        guard let s, !s.isEmpty else { return nil }
        var out = "", used = 0
        for ch in s {
            used += ch.utf8.count
            if used > max { break }
            out.append(ch)
        }
        return out.isEmpty ? nil : out
    }
}
