// libFuzzer target: envelope reader and ingest decoding of every item type.
// First byte: content encoding (0 identity, 1 gzip of the rest, 2 deflate of the rest, 3 the
// rest sent as already-gzip'd bytes, 4 a /store/ body, 5 the rest sent as brotli bytes: the
// brotli decoder's input); the rest is the body.
import Foundation
import FaultlineProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnvelope(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let mode = data[0] % 6
    var body = Data(bytes: data + 1, count: size - 1)
    var headers = ["X-Sentry-Auth": "Sentry sentry_key=0123456789abcdef0123456789abcdef"]
    switch mode {
    case 1: body = Deflate.gzip(body) ?? body; headers["Content-Encoding"] = "gzip"
    case 2: body = Deflate.compress(body); headers["Content-Encoding"] = "deflate"
    case 3: headers["Content-Encoding"] = "gzip"
    case 5: headers["Content-Encoding"] = "br"
    default: break
    }
    var limits = IngestLimits()
    limits.maxDecompressedBytes = 4 * 1024 * 1024
    let request = HTTPRequest(method: "POST", path: "/api/1/envelope/", headers: headers, body: body)
    do {
        let s: DecodedSubmission
        if mode == 4 {
            s = try EnvelopeDecoder.storeBody(try EnvelopeDecoder.body(of: request, limit: limits.maxEventBytes), limits: limits)
        } else {
            s = try EnvelopeDecoder.envelope(of: request, limits: limits)
        }
        precondition(s.items.count <= limits.maxItems, "more items than the cap")
        precondition(s.items.reduce(0) { $0 + $1.payload.count } + (s.eventBytes?.count ?? 0) <= limits.maxKeptBytes, "kept more than the cap")
        for item in s.items {
            precondition(item.payload.count <= limits.cap(forItemType: item.type)!, "item over its type's cap")
            if let (started, crashed) = try? SessionCounting.counts(item, limits: limits) {
                // A `session` update may report a crash of a session started earlier (crashed 1,
                // started 0); an aggregate's started count includes its crashed ones.
                precondition(started >= 0 && crashed >= 0, "negative session counts")
                precondition(item.type != "sessions" || crashed <= started, "aggregate crashed more than started")
            }
        }
        _ = EventFields.installID(event: s.event, request: request) ?? EventFields.installID(items: s.items)
        _ = EventFields.appID(event: s.event, request: request)
        _ = EventFields.timestamp(s.event?["timestamp"])
        _ = EnvelopeDecoder.normalisedEventID(s.event?["event_id"]?.stringValue)
    } catch {
        _ = error.response
    }
    return 0
}
