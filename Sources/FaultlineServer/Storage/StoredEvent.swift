// The stored form of an event (the `event` column): either the event JSON zlib-compressed here, or
// — when the client gzip'd an envelope that holds nothing but the event — the request body itself,
// kept as it arrived, so ingest does not compress again what the client already compressed (that
// compression was a fifth of ingest's CPU). A zlib stream starts with 0x78 and a gzip member with
// 1f 8b, so the two are told apart by their first bytes; rows written before the second form exist
// are all zlib.
import Foundation
import FaultlineProtocol

public enum StoredEvent {
    /// The request's body is kept in place of a compression of ours only when it really is little
    /// more than the event: what is not the event (envelope and item headers, a skipped item) at most
    /// this many bytes...
    static let maxEnvelopeOverhead = 4096
    /// ...and compressed at least 2:1 (a client's stored-only gzip is compressed again here).
    static let minCompressionRatio = 2

    /// The bytes to store for an event of `eventBytes`: the request `body` (gzip, its envelope
    /// `inflatedBytes` long in all, every other item already skipped) when it qualifies, else the
    /// event compressed here.
    static func encode(eventBytes: Data, gzipBody body: Data?, inflatedBytes: Int) -> Data {
        if let body, isGzip(body), inflatedBytes - eventBytes.count <= maxEnvelopeOverhead,
            body.count * minCompressionRatio <= eventBytes.count
        {
            return body
        }
        return PhaseClock.time(.storeCompress) { Deflate.compress(eventBytes) }
    }

    /// The event's JSON bytes, as the client sent them.
    public static func json(_ stored: Data) throws -> Data {
        let inflated = try Inflate.inflate(stored, limit: 64 * 1024 * 1024)
        guard isGzip(stored) else { return inflated }
        // A kept envelope: its one event item (an envelope holds one event at most; ingest checked it).
        var limits = EnvelopeReader.Limits()
        limits.keptItemCaps = ["event": Int.max]
        guard let item = try EnvelopeReader.read(inflated, limits: limits).items.first else {
            throw Inflate.Failure.corrupt("stored envelope without an event item")
        }
        return item.payload
    }

    public static func decode(_ stored: Data) throws -> JSONValue {
        try JSONParser.parse(try json(stored))
    }

    /// Only the top-level members named in `keep` are built (the rest is validated and skipped).
    public static func decode(_ stored: Data, keeping keep: Set<String>) throws -> JSONValue {
        try JSONParser.parseObject(try json(stored), keeping: keep)
    }

    static func isGzip(_ d: Data) -> Bool {
        d.count >= 2 && d[d.startIndex] == 0x1f && d[d.startIndex + 1] == 0x8b
    }
}
