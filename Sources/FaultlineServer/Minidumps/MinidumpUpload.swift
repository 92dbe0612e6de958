// POST /api/<project>/minidump/: Sentry's minidump endpoint, as Crashpad and Breakpad upload to it.
// The body is multipart/form-data (gzip'd by Crashpad: `Content-Encoding: gzip`), decoded here
// into the same `DecodedSubmission` an envelope becomes — the dump as an `event.minidump`
// attachment, the other file parts as attachments (sentry-native's own merged into the event:
// SentryNativeAttachments), the form fields as the event — so
// from here on a dump takes the envelope's path (MinidumpIngest walks it, IngestHandler stores it).
import Foundation
import FaultlineProtocol

enum MinidumpUpload {
    /// The part that holds the dump (Breakpad's and Crashpad's name, which Sentry reads).
    static let dumpPart = "upload_file_minidump"
    /// Other file parts are attachments: Breakpad names them with this prefix (the attachment's
    /// name is what follows it); Crashpad's handler names each by its file's name, with a filename.
    static let filePrefix = "upload_file_"

    /// A file part, not a form field: it has a filename, or Breakpad's prefix.
    static func isFile(_ part: MultipartPart) -> Bool { part.filename != nil || (part.name?.hasPrefix(filePrefix) ?? false) }
    /// The attachment type Sentry gives a dump (also what envelopes send: MinidumpIngest reads it).
    static let attachmentType = "event.minidump"

    /// The answer's text: the event id as a dashed UUID (32 hex digits in, 8-4-4-4-12 out).
    static func answer(eventID id: String) -> String {
        guard id.utf8.count == 32 else { return id }
        let c = Array(id)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(c[$0]) }.joined(separator: "-")
    }

    /// Decodes the request within the ingest caps: inflation stops at `maxMinidumpUploadBytes`,
    /// parts at `maxMinidumpUploadParts`, the dump at `maxMinidumpBytes`, the other files at the
    /// attachment cap each and `maxKeptBytes` together.
    static func submission(of request: HTTPRequest, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let body = try EnvelopeDecoder.body(of: request, limit: limits.maxMinidumpUploadBytes)
        let parts: [MultipartPart]
        do {
            parts = try Multipart.parse(body, contentType: request.header("content-type"), maxParts: limits.maxMinidumpUploadParts)
        } catch {
            throw .malformed("minidump upload: \(error)")
        }
        guard let dumpIndex = parts.firstIndex(where: { $0.name == Self.dumpPart }) else {
            throw .malformed("minidump upload: no \(Self.dumpPart) part (the dump goes in a file part of that name)")
        }
        let dumpPart = parts[dumpIndex]
        let dump = try decompressedDump(dumpPart.body, limit: limits.maxMinidumpBytes)
        var event = try SentryFormFields.event(parts, maxEventBytes: limits.maxEventBytes)
        // The first dump part is the crash's; a second one is kept as an attachment, not dropped.
        let others = parts.indices.filter { $0 != dumpIndex && isFile(parts[$0]) }.map { parts[$0] }
        let files = SentryNativeAttachments.merge(others, into: &event)
        guard event.serialized().count <= limits.maxEventBytes else {
            throw .tooLarge("minidump upload: the event with sentry-native's attachments merged exceeds \(limits.maxEventBytes) bytes")
        }
        var attachments = [
            Envelope.Item(
                type: "attachment", payload: dump,
                extra: [
                    "filename": .string(dumpPart.filename.flatMap { $0.isEmpty ? nil : $0 } ?? "minidump.dmp"),
                    "attachment_type": .string(attachmentType), "content_type": "application/x-dmp"
                ])
        ]
        let attachmentCap = limits.maxItemBytes["attachment"] ?? limits.maxKeptBytes
        var kept = 0
        for part in files {
            let name = part.name ?? ""
            guard part.body.count <= attachmentCap else {
                throw .tooLarge("minidump upload: part '\(name.prefix(100))' is \(part.body.count) bytes; at most \(attachmentCap) allowed")
            }
            kept += part.body.count
            guard kept <= limits.maxKeptBytes else {
                throw .tooLarge("minidump upload: its attachments exceed \(limits.maxKeptBytes) bytes together")
            }
            let fallback = name.hasPrefix(filePrefix) ? String(name.dropFirst(filePrefix.count)) : name
            var header: [String: JSONValue] = ["filename": .string(part.filename.flatMap { $0.isEmpty ? nil : $0 } ?? fallback)]
            if let type = part.contentType { header["content_type"] = .string(type) }
            attachments.append(Envelope.Item(type: "attachment", payload: part.body, extra: header))
        }
        return DecodedSubmission(envelopeHeader: [:], event: event, eventBytes: nil, items: [], attachments: attachments)
    }

    /// The dump as sent, or inflated when the part itself is gzip'd (Electron can compress the
    /// file before the form is built); over `limit` either way is 413.
    static func decompressedDump(_ part: Data, limit: Int) throws(IngestError) -> Data {
        if StoredEvent.isGzip(part) {
            do { return try Inflate.inflate(part, limit: limit) } catch { throw EnvelopeDecoder.inflateError(error) }
        }
        guard part.count <= limit else { throw .tooLarge("minidump upload: the dump is \(part.count) bytes; at most \(limit) allowed") }
        return part
    }
}
