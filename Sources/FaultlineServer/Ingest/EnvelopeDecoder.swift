// From request bytes to validated envelope contents: decompression under caps, envelope
// framing, one event's JSON, the other items we keep. Throws `IngestError` with the reason.
import Foundation
import FaultlineProtocol

public struct DecodedSubmission: Sendable {
    public var envelopeHeader: JSONValue
    public var event: JSONValue?
    /// The event item's bytes as the client sent them (stored verbatim, compressed).
    public var eventBytes: Data?
    public var items: [Envelope.Item]
}

public enum EnvelopeDecoder {
    /// Item types kept and counted besides the event.
    public static let keptItemTypes: Set<String> = ["session", "sessions", "log", "client_report"]

    /// Applies Content-Encoding with the decompressed-size cap.
    public static func body(of request: HTTPRequest, limits: IngestLimits) throws(IngestError) -> Data {
        let encoding = (request.header("content-encoding") ?? "identity").lowercased().trimmingCharacters(in: .whitespaces)
        do {
            switch encoding {
            case "", "identity": break
            case "gzip", "x-gzip": return try Inflate.inflate(request.body, limit: limits.maxDecompressedBytes)
            case "deflate": return try Inflate.inflateHTTPDeflate(request.body, limit: limits.maxDecompressedBytes)
            default: throw IngestError.unsupportedEncoding("Content-Encoding '\(encoding)' is not supported (use gzip, deflate or none)")
            }
        } catch let e as IngestError {
            throw e
        } catch let e as Inflate.Failure {
            if case .tooLarge = e { throw .tooLarge(e.description) }
            throw .malformed(e.description)
        } catch {
            throw .malformed("\(error)")
        }
        guard request.body.count <= limits.maxDecompressedBytes else { throw .tooLarge("body exceeds \(limits.maxDecompressedBytes) bytes") }
        return request.body
    }

    /// Decodes an envelope body.
    public static func envelope(_ data: Data, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let env: Envelope
        do { env = try EnvelopeFraming.parse(data) } catch { throw .malformed("malformed envelope: \(error)") }
        guard env.items.count <= limits.maxItems else { throw .tooLarge("envelope has \(env.items.count) items; at most \(limits.maxItems) allowed") }
        var out = DecodedSubmission(envelopeHeader: env.header, event: nil, eventBytes: nil, items: [])
        for (i, item) in env.items.enumerated() {
            switch item.type {
            case "event", "transaction":
                guard item.type == "event" else { continue }
                out.event = try event(item.payload, limits: limits, what: "item \(i) (event)")
                out.eventBytes = item.payload
            case "":
                throw .malformed("item \(i): header has no type")
            case let t where keptItemTypes.contains(t):
                if t != "log" {
                    do { _ = try FastJSON.parse(item.payload) } catch { throw .malformed("item \(i) (\(t)): \(error)") }
                }
                out.items.append(item)
            default:
                continue  // attachments and unknown types are skipped, as the protocol allows
            }
        }
        return out
    }

    /// Decodes a legacy `/store/` body (one event's JSON).
    public static func storeBody(_ data: Data, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let e = try event(data, limits: limits, what: "body")
        return DecodedSubmission(envelopeHeader: [:], event: e, eventBytes: data, items: [])
    }

    /// Top-level event members ingest reads (ids, time, release, install and app ids, the stack and
    /// its modules). The rest is validated but not built; the stored bytes are the client's own.
    static let eventFieldsRead: Set<String> = ["event_id", "timestamp", "release", "platform", "user", "tags", "contexts",
                                               "exception", "threads", "stacktrace", "debug_meta"]

    static func event(_ payload: Data, limits: IngestLimits, what: String) throws(IngestError) -> JSONValue {
        guard payload.count <= limits.maxEventBytes else { throw .tooLarge("\(what) is \(payload.count) bytes; at most \(limits.maxEventBytes) allowed") }
        let v: JSONValue
        do { v = try FastJSON.parseObject(payload, keeping: eventFieldsRead) } catch { throw .malformed("\(what): \(error)") }
        guard case .object = v else { throw .malformed("\(what): an event must be a JSON object") }
        return v
    }

    /// A Sentry event id: 32 hex digits (a dashed UUID is accepted and normalised).
    public static func normalisedEventID(_ s: String?) -> String? {
        guard let s else { return nil }
        let h = s.lowercased().filter { $0 != "-" }
        guard h.count == 32, h.allSatisfy({ $0.isHexDigit }) else { return nil }
        return h
    }
}
