// An attachment too large for this server (over the attachment cap, or the envelope's kept total)
// is stepped over while the envelope is framed, and the event it came with is kept: losing a crash
// for its log file would be worse than losing the log file. The event says what was left out, in
// Sentry's processing `errors`, which the event's JSON shows.
import Foundation
import FaultlineProtocol

enum DroppedAttachments {
    /// The client's event (its whole JSON, not ingest's partial parse) with an error entry per
    /// attachment left out.
    static func noted(_ dropped: [(filename: String, bytes: Int64)], in eventBytes: Data, limits: IngestLimits) throws(IngestError) -> JSONValue {
        var event: JSONValue
        do { event = try JSONParser.parse(eventBytes) } catch { throw .malformed("event: \(error)") }
        let cap = limits.maxItemBytes["attachment"] ?? 0
        let entries: [JSONValue] = dropped.map { d in
            [
                "type": "too_large", "name": "attachment",
                "value": .string("\(d.filename): \(d.bytes) bytes; one attachment may have \(cap), all of an envelope's \(limits.maxKeptBytes)")
            ]
        }
        event["errors"] = .array((event["errors"]?.arrayValue ?? []) + entries)
        return event
    }
}
