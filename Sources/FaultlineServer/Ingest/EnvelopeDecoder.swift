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
    /// `attachment` items (any bytes; kept only with an event: `IngestHandler`).
    public var attachments: [Envelope.Item] = []
    /// Attachments stepped over for their size (over the attachment cap or the envelope's kept
    /// total): the event they came with is kept and says so.
    public var droppedAttachments: [(filename: String, bytes: Int64)] = []
    /// The request body when it came compressed (gzip or deflate), and how many bytes it inflated
    /// to: ingest may store it as it came (`StoredEvent`).
    public var compressedBody: Data? = nil
    public var inflatedBytes = 0
}

public enum EnvelopeDecoder {
    /// Item types kept and counted besides the event.
    public static let keptItemTypes: Set<String> = ["session", "sessions", "log", "client_report", "transaction", "user_report", "feedback"]

    enum Encoding { case identity, gzip, deflate, brotli }

    static func encoding(of request: HTTPRequest) throws(IngestError) -> Encoding {
        // What SDKs send, as they send it, without lowercasing and trimming a copy first.
        switch request.header("content-encoding") {
        case nil: return .identity
        case "gzip"?: return .gzip
        default: break
        }
        let encoding = (request.header("content-encoding") ?? "identity").lowercased().trimmingCharacters(in: .whitespaces)
        switch encoding {
        case "", "identity": return .identity
        case "gzip", "x-gzip": return .gzip
        case "deflate": return .deflate
        case "br": return .brotli
        default: throw IngestError.unsupportedEncoding("Content-Encoding '\(encoding)' is not supported (use gzip, deflate, br or none)")
        }
    }

    /// Applies Content-Encoding with a cap on the decompressed size (`/store/`: one event).
    public static func body(of request: HTTPRequest, limit: Int) throws(IngestError) -> Data {
        do {
            switch try encoding(of: request) {
            case .identity: break
            case .gzip:
                if let whole = GzipMember.inflated(request.body, limit: limit) { return Data(whole) }
                return try Inflate.inflate(request.body, limit: limit)
            case .deflate: return try Inflate.inflateHTTPDeflate(request.body, limit: limit)
            case .brotli: return try BrotliDecoder.decode(request.body, limit: limit)
            }
        } catch {
            throw inflateError(error)
        }
        guard request.body.count <= limit else { throw .tooLarge("body exceeds \(limit) bytes; at most \(limit) allowed") }
        return request.body
    }

    static func inflateError(_ error: Error) -> IngestError {
        if let e = error as? IngestError { return e }
        if let e = error as? Inflate.Failure {
            if case .tooLarge = e { return .tooLarge(e.description) }
            return .malformed(e.description)
        }
        return .malformed("\(error)")
    }

    /// Decodes an envelope request: inflates (if encoded) straight into the framing reader, so
    /// the decompressed body is never held whole and every framing limit stops the inflation.
    public static func envelope(of request: HTTPRequest, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let env: Envelope
        var inflated = 0
        switch try encoding(of: request) {
        case .identity:
            guard request.body.count <= limits.maxDecompressedBytes else {
                throw .tooLarge("body exceeds \(limits.maxDecompressedBytes) bytes")
            }
            do { env = try EnvelopeReader.read(request.body, limits: limits.envelope) } catch { throw refusal(error) }
        case .gzip:
            (env, inflated) = try framed(request.body, limits: limits, format: .gzipOrZlib)
        case .deflate:
            // zlib-wrapped by the RFC, raw in some clients: the first two bytes tell which.
            (env, inflated) = try framed(request.body, limits: limits, format: Self.looksWrapped(request.body) ? .gzipOrZlib : .raw)
        case .brotli:
            env = try framedBrotli(request.body, limits: limits)
        }
        var out = try submission(env, limits: limits)
        // Kept as it came only when zlib can read it back (StoredEvent); brotli bodies are stored as JSON.
        if inflated > 0 { (out.compressedBody, out.inflatedBytes) = (request.body, inflated) }
        return out
    }

    /// A zlib header (CM 8, header checksum divisible by 31) or the gzip magic.
    static func looksWrapped(_ d: Data) -> Bool {
        guard d.count >= 2 else { return true }
        let a = d[d.startIndex], b = d[d.startIndex + 1]
        if a == 0x1f && b == 0x8b { return true }
        return a & 0x0F == 8 && (UInt16(a) << 8 | UInt16(b)) % 31 == 0
    }

    /// The envelope and the number of bytes the body inflated to.
    static func framed(_ body: Data, limits: IngestLimits, format: Inflate.Format) throws(IngestError) -> (Envelope, Int) {
        var reader = EnvelopeReader(limits: limits.envelope)
        do {
            let inflated = try PhaseClock.time(.inflateAndFrame) {
                // One gzip member decoded whole (GzipMember), else streamed with the cap applied as it inflates.
                if format == .gzipOrZlib, let whole = GzipMember.inflated(body, limit: limits.maxDecompressedBytes) {
                    try whole.withUnsafeBufferPointer { try reader.feed($0) }
                    return whole.count
                }
                return try Inflate.inflate(body, limit: limits.maxDecompressedBytes, format: format) { try reader.feed($0) }
            }
            return (try reader.finish(), inflated)
        } catch let e as Envelope.ParseError {
            throw refusal(e)
        } catch {
            throw inflateError(error)
        }
    }

    /// The envelope of a brotli body, decoded straight into the framing reader.
    static func framedBrotli(_ body: Data, limits: IngestLimits) throws(IngestError) -> Envelope {
        var reader = EnvelopeReader(limits: limits.envelope)
        do {
            try PhaseClock.time(.inflateAndFrame) { try BrotliDecoder.decode(body, limit: limits.maxDecompressedBytes) { try reader.feed($0) } }
            return try reader.finish()
        } catch let e as Envelope.ParseError {
            throw refusal(e)
        } catch {
            throw inflateError(error)
        }
    }

    /// A framing refusal: over a limit is 413, anything else is malformed (400).
    static func refusal(_ e: Envelope.ParseError) -> IngestError {
        e.isOverLimit ? .tooLarge(e.description) : .malformed("malformed envelope: \(e)")
    }

    /// Decodes an already framed envelope body (tests and fuzzing).
    public static func envelope(_ data: Data, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let env: Envelope
        do { env = try EnvelopeReader.read(data, limits: limits.envelope) } catch { throw refusal(error) }
        return try submission(env, limits: limits)
    }

    static func submission(_ env: Envelope, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        var out = DecodedSubmission(envelopeHeader: env.header, event: nil, eventBytes: nil, items: [])
        for (i, item) in env.items.enumerated() {
            switch item.type {
            case "event":
                out.event = try PhaseClock.time(.parseEvent) { () throws(IngestError) -> JSONValue in
                    try event(item.payload, limits: limits, what: "item \(i) (event)")
                }
                out.eventBytes = item.payload
            case let t where keptItemTypes.contains(t):
                // Validated without building a document (no JSON tree for a client's blob); session
                // items are small (capped) and read by SessionCounting.
                // Every kept item is JSON (`log` items included: the pages and the API parse them).
                do { try JSONParser.validate(item.payload) } catch { throw .malformed("item \(i) (\(t)): \(error)") }
                if t == "sessions" || t == "session" {
                    do { _ = try SessionCounting.counts(item, limits: limits) } catch { throw .malformed("item \(i) (\(t)): \(error)") }
                }
                out.items.append(item)
            case "attachment":
                if let size = item.header[EnvelopeReader.droppedSizeKey]?.int64Value {
                    out.droppedAttachments.append((item.header["filename"]?.stringValue ?? "attachment", size))
                } else {
                    out.attachments.append(item)  // opaque bytes: nothing to validate
                }
            default:
                continue  // not kept by the framing reader
            }
        }
        return out
    }

    /// Decodes a legacy `/store/` body (one event's JSON).
    public static func storeBody(_ data: Data, limits: IngestLimits) throws(IngestError) -> DecodedSubmission {
        let e = try event(data, limits: limits, what: "body")
        // A transaction sent to /store/ (SDKs from before envelopes did) is what an envelope's
        // `transaction` item is, as Relay takes it: stored with the traces, never an error event.
        if e["type"]?.stringValue == "transaction" {
            return DecodedSubmission(envelopeHeader: [:], event: nil, eventBytes: nil, items: [Envelope.Item(type: "transaction", payload: data)])
        }
        return DecodedSubmission(envelopeHeader: [:], event: e, eventBytes: data, items: [])
    }

    /// Top-level event members ingest reads (ids, time, release, install and app ids, the stack and
    /// its modules). The rest is validated but not built; the stored bytes are the client's own.
    public static let eventFieldsRead: Set<String> = Set<String>([
        "event_id", "timestamp", "level", "release", "environment", "platform", "user", "tags", "contexts",
        "exception", "threads", "stacktrace", "debug_meta",
        "logentry", "message", "fingerprint",  // grouping of messages and the client's own fingerprint
        "type"  // a transaction sent to /store/ (storeBody)
    ]).union(SentryValues.keysToCheck)  // other forms of the list containers, legacy names

    /// What of an event ingest builds: `eventFieldsRead`, and `request` and `sdk` as far as
    /// InferredIPAddress reads them. Inside them, nothing ingest does not read: a stack's
    /// `registers`; of `contexts` only `os` (the OS breakdown, the `os.name` tag), `app` (the app
    /// id), `trace` (the trace an error belongs to) and of `device` its `arch` and install id;
    /// `breadcrumbs` only as far as `SentryValues` checks its form (an event in another form is
    /// read again in full before it is rewritten, as is one whose frames carry variables), of
    /// `request` and `sdk` only what InferredIPAddress reads.
    public static let eventSelection: JSONSelection = {
        let stacktrace = JSONSelection(["registers": .skipped], othersWhole: true)
        // An exception or a thread; also a bare list of them, whose elements the selection reaches.
        let holder = JSONSelection(["stacktrace": .selected(stacktrace)], othersWhole: true)
        let container = JSONSelection(["values": .selected(holder), "stacktrace": .selected(stacktrace)], othersWhole: true)
        let device = JSONSelection(only: ["arch", "device_unique_identifier"])
        let contexts = JSONSelection(["os": .whole, "app": .whole, "trace": .whole, "device": .selected(device)], othersWhole: false)
        let breadcrumbs = JSONSelection(["values": .presenceOnly], othersWhole: false)
        var members = Dictionary(uniqueKeysWithValues: eventFieldsRead.map { ($0, JSONSelection.Member.whole) })
        members["exception"] = .selected(container)
        members["threads"] = .selected(container)
        members["stacktrace"] = .selected(stacktrace)
        members["contexts"] = .selected(contexts)
        members["breadcrumbs"] = .selected(breadcrumbs)
        // What InferredIPAddress decides by (with `user` and `platform`, kept whole).
        members["request"] = .selected(JSONSelection(["env": .selected(JSONSelection(only: ["REMOTE_ADDR"]))], othersWhole: false))
        members["sdk"] = .selected(JSONSelection(["settings": .selected(JSONSelection(only: ["infer_ip"]))], othersWhole: false))
        return JSONSelection(members, othersWhole: false)
    }()

    static func event(_ payload: Data, limits: IngestLimits, what: String) throws(IngestError) -> JSONValue {
        guard payload.count <= limits.maxEventBytes else { throw .tooLarge("\(what) is \(payload.count) bytes; at most \(limits.maxEventBytes) allowed") }
        let v: JSONValue
        do { v = try JSONParser.parseObject(payload, selecting: eventSelection) } catch { throw .malformed("\(what): \(error)") }
        guard case .object = v else { throw .malformed("\(what): an event must be a JSON object") }
        return v
    }

    /// A Sentry event id: 32 hex digits (a dashed UUID is accepted and normalised).
    public static func normalisedEventID(_ s: String?) -> String? {
        guard let s else { return nil }
        // Already 32 lowercase hex digits (what SDKs send): the answer is the id itself.
        if s.utf8.count == 32, s.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }) { return s }
        let h = s.lowercased().filter { $0 != "-" }
        // ASCII only: Character.isHexDigit also takes fullwidth digits (U+FF10…).
        guard h.count == 32, h.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) }) else { return nil }
        return h
    }
}
