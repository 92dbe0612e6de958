// A Sentry `transaction` item → the spans we store: the transaction's own span (contexts.trace)
// and its child `spans`, validated the way Relay does (ids, timestamps, start before end).
import Foundation
import FaultlineProtocol

/// One span as stored: the transaction's root span or one of its children.
public struct SpanRecord: Sendable, Equatable {
    public var traceID: String
    public var spanID: String
    public var parentSpanID: String?
    /// Transaction name for a root, `description` for a child.
    public var name: String
    public var op: String?
    public var status: String?
    public var start: Double
    public var end: Double
    public var isTransaction: Bool
    /// `data` (and `tags`) as JSON text, for the tree view.
    public var data: String?
}

/// A transaction as ingest hands it to the store.
public struct IncomingTransaction: Sendable {
    public var projectID: Int64
    public var eventID: String
    public var received: Double
    public var root: SpanRecord
    public var spans: [SpanRecord]
    /// Children dropped because they were invalid (bad ids, end before start).
    public var invalidSpans: Int
}

public enum TransactionDecoder {
    /// Top-level members read; the rest (SDK info, breadcrumbs…) is validated but not built.
    static let fieldsRead = JSONSelection(only: ["type", "transaction", "contexts", "spans", "start_timestamp", "timestamp", "event_id"])

    public static func decode(_ payload: Data, projectID: Int64, received: Double, envelopeEventID: String?) throws(IngestError) -> IncomingTransaction {
        let v: JSONValue
        do { v = try JSONParser.parseObject(payload, selecting: fieldsRead) } catch { throw .malformed("transaction: \(error)") }
        guard case .object = v else { throw .malformed("transaction: must be a JSON object") }
        let trace = v["contexts"]?["trace"]
        guard let traceID = hexID(trace?["trace_id"]?.stringValue, 32), let spanID = hexID(trace?["span_id"]?.stringValue, 16) else {
            throw .malformed("transaction: contexts.trace needs trace_id (32 hex) and span_id (16 hex)")
        }
        guard let start = EventFields.timestamp(v["start_timestamp"]), let end = EventFields.timestamp(v["timestamp"]), start <= end else {
            throw .malformed("transaction: start_timestamp and timestamp are required, start first")
        }
        let root = SpanRecord(
            traceID: traceID, spanID: spanID, parentSpanID: hexID(trace?["parent_span_id"]?.stringValue, 16),
            name: v["transaction"]?.stringValue ?? "<unnamed>", op: trace?["op"]?.stringValue,
            status: status(trace?["status"]), start: start, end: end, isTransaction: true,
            data: trace?["data"].map { String(decoding: $0.serialized(), as: UTF8.self) })
        var spans: [SpanRecord] = [], invalid = 0
        for s in v["spans"]?.arrayValue ?? [] {
            guard let sid = hexID(s["span_id"]?.stringValue, 16), let st = EventFields.timestamp(s["start_timestamp"]),
                let en = EventFields.timestamp(s["timestamp"]), st <= en
            else { invalid += 1; continue }
            // A child of another trace cannot be drawn in this one.
            if let t = s["trace_id"]?.stringValue, hexID(t, 32) != traceID { invalid += 1; continue }
            var data = s["data"]?.objectValue ?? [:]
            if let tags = s["tags"]?.objectValue, !tags.isEmpty { data["tags"] = .object(tags) }
            spans.append(
                SpanRecord(
                    traceID: traceID, spanID: sid, parentSpanID: hexID(s["parent_span_id"]?.stringValue, 16) ?? spanID,
                    name: s["description"]?.stringValue ?? s["op"]?.stringValue ?? "", op: s["op"]?.stringValue,
                    status: status(s["status"]), start: st, end: en, isTransaction: false,
                    data: data.isEmpty ? nil : String(decoding: JSONValue.object(data).serialized(), as: UTF8.self)))
        }
        let eventID =
            EnvelopeDecoder.normalisedEventID(envelopeEventID) ?? EnvelopeDecoder.normalisedEventID(v["event_id"]?.stringValue) ?? Keys.randomHex(bytes: 16)
        return IncomingTransaction(projectID: projectID, eventID: eventID, received: received, root: root, spans: spans, invalidSpans: invalid)
    }

    /// Lowercase hex of the given length (upper case is folded; Sentry ids are case-insensitive).
    static func hexID(_ s: String?, _ length: Int) -> String? {
        guard let s = s?.lowercased(), s.utf8.count == length, s.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }),
            s.utf8.contains(where: { $0 != 48 })
        else { return nil }
        return s
    }

    /// Relay's reading of `status`: the names, `success`/`failure`, or the integer codes 0–16.
    static let statusNames = [
        "ok", "cancelled", "unknown_error", "invalid_argument", "deadline_exceeded", "not_found",
        "already_exists", "permission_denied", "resource_exhausted", "failed_precondition", "aborted",
        "out_of_range", "unimplemented", "internal_error", "unavailable", "data_loss", "unauthenticated"
    ]
    static func status(_ v: JSONValue?) -> String? {
        if let n = v?.int64Value, n >= 0, n < statusNames.count { return statusNames[Int(n)] }
        guard let s = v?.stringValue else { return nil }
        switch s {
        case "success": return "ok"
        case "failure": return "internal_error"
        case "unknown": return "unknown_error"
        default: return statusNames.contains(s) ? s : nil
        }
    }
}
