// The legacy `/store/` body as raven-python (and other raven-era clients) sent it: the event
// JSON zlib-compressed and then base64-encoded, with no Content-Encoding. Sentry's ingestion still
// reads it (a body that does not start with `{` is base64, then zlib unless it decodes to JSON);
// without this every event from those clients was refused as invalid JSON.
import Foundation
import FaultlineProtocol

enum LegacyStoreBody {
    /// The event JSON of a `/store/` body already stripped of its Content-Encoding: the body
    /// itself when it is JSON (or not base64), else its base64 decoded, inflated when zlib.
    static func decoded(_ body: Data, limit: Int) throws(IngestError) -> Data {
        guard let first = JSONParser.firstSignificantByte(body), first != UInt8(ascii: "{") else { return body }
        guard let binary = Data(base64Encoded: body, options: .ignoreUnknownCharacters), !binary.isEmpty else { return body }
        if JSONParser.firstSignificantByte(binary) == UInt8(ascii: "{") { return binary }
        do { return try Inflate.inflate(binary, limit: limit) } catch {
            if case .tooLarge = error { throw .tooLarge(error.description) }
            throw .malformed("the body is neither JSON nor base64 of zlib-compressed JSON (raven's form): \(error)")
        }
    }
}
