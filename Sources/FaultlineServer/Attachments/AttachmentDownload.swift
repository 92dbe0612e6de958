// An attachment as a download, for the API (server token) and the pages (web session) alike.
// The bytes are the client's: a browser must never render them as a page of this origin. So the
// response is always `Content-Disposition: attachment`, its type is application/octet-stream
// unless the stored type is a raster image browsers cannot run, sniffing is off, and a sandbox
// CSP covers the case of a browser that opens it anyway. The client's filename reaches the header
// only as a reduced ASCII name and an RFC 8187 percent-encoded one, so no byte of it can end the
// header or name a path.
import Foundation

enum AttachmentDownload {
    /// Types served as themselves: raster images that carry no script.
    static let safeImageTypes: Set<String> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

    static func response(_ record: AttachmentRecord, _ data: Data) -> HTTPResponse {
        HTTPResponse(
            status: 200,
            headers: [
                ("Content-Type", contentType(record.contentType)), ("Content-Disposition", disposition(record.filename)),
                ("X-Content-Type-Options", "nosniff"), ("Content-Security-Policy", "default-src 'none'; sandbox"),
                ("Cache-Control", "private, no-store")
            ], body: .data(data))
    }

    static func contentType(_ stored: String?) -> String {
        let base = (stored ?? "").split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        return safeImageTypes.contains(base) ? base : "application/octet-stream"
    }

    /// `attachment; filename="<ASCII letters, digits, . _ ->"; filename*=UTF-8''<percent-encoded>`.
    static func disposition(_ filename: String) -> String {
        var ascii = String(String.UnicodeScalarView(filename.unicodeScalars.map { isPlain($0) ? $0 : "_" }))
        if ascii.hasPrefix(".") { ascii = "_" + ascii.dropFirst() }
        if ascii.isEmpty { ascii = "attachment" }
        var encoded = ""
        for b in filename.utf8 {
            if b < 0x80, isPlain(Unicode.Scalar(b)) { encoded.append(Character(Unicode.Scalar(b))) } else { encoded += String(format: "%%%02X", b) }
        }
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(encoded)"
    }

    private static func isPlain(_ s: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(s) || ("A"..."Z").contains(s) || ("0"..."9").contains(s) || s == "." || s == "_" || s == "-"
    }
}
