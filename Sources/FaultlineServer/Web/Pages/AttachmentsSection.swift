// An occurrence's attachments on the issue page, and their download for a logged-in user
// (/ui/attachments/<occurrence id>/<attachment id>). A name is the client's text: control
// characters are shown as code points (a newline or tab would hide what follows), then escaped.
import Foundation

struct AttachmentsSection {
    let ctx: WebContext

    func render(occurrenceID: Int64) throws -> String {
        guard let store = ctx.stores.attachments else { return "" }
        let list = try store.attachments(occurrenceID: occurrenceID)
        guard !list.isEmpty else { return "" }
        var out = "<h2>Attachments</h2><table><thead><tr><th>File</th><th>Type</th><th>Size</th></tr></thead><tbody>"
        for a in list {
            out += "<tr><td><a href=\"/ui/attachments/\(occurrenceID)/\(a.id)\">\(HTML.esc(Self.displayName(a.filename)))</a></td>"
            out += "<td>\(HTML.esc([a.attachmentType, a.contentType].compactMap { $0 }.joined(separator: " · ")))</td>"
            out += "<td>\(HTML.bytes(a.size))</td></tr>"
        }
        return out + "</tbody></table>"
    }

    static func displayName(_ name: String) -> String {
        var out = ""
        for s in name.unicodeScalars {
            if s.value < 0x20 || s.value == 0x7f { out += "[U+" + String(format: "%04X", s.value) + "]" } else { out.unicodeScalars.append(s) }
        }
        return out
    }

    func download(occurrenceID: String, attachmentID: String) throws -> HTTPResponse {
        guard ctx.request.method == "GET" || ctx.request.method == "HEAD", let store = ctx.stores.attachments,
            let o = Int64(occurrenceID), let id = Int64(attachmentID), let (record, data) = try store.attachment(id: id, occurrenceID: o)
        else { return WebUI.notFound("no such attachment") }
        return AttachmentDownload.response(record, data)
    }
}
