// The last 32 breadcrumbs: kept in memory for events and copied into the crash handler's ring.
import CFaultlineCrash
import Foundation
import FaultlineProtocol
import Synchronization

final class BreadcrumbStore: Sendable {
    static let shared = BreadcrumbStore()
    static let capacity = Int(FAULTLINE_BREADCRUMB_SLOTS)  // the crash core's ring, so both hold the same ones
    private static let maxBytes = Int(FAULTLINE_BREADCRUMB_MAX_BYTES)  // the crash core's slot size

    private let recent = Mutex<[LogRecord]>([])

    /// Serialises the breadcrumb once (Sentry's shape) and copies it into the crash ring.
    func add(_ r: LogRecord) {
        var bytes = Self.serialize(r, includeData: true)
        if bytes.count > Self.maxBytes {
            // Keep it in the ring with a shortened message rather than losing it.
            var short = r
            short.message = String(r.message.utf8.prefix(600)).map { $0 + "…" } ?? String(r.message.prefix(200)) + "…"
            bytes = Self.serialize(short, includeData: false)
        }
        recent.withLock { list in
            list.append(r)
            if list.count > Self.capacity { list.removeFirst() }
        }
        if bytes.count <= Self.maxBytes { CrashHandler.record(breadcrumbBytes: bytes) }
    }

    static func serialize(_ r: LogRecord, includeData: Bool) -> [UInt8] {
        var w = JSONWriter()
        w.raw("{\"timestamp\":"); w.double(r.timestamp.secondsSince1970)
        w.raw(",\"type\":\"default\",\"category\":\"log\",\"level\":"); w.string(r.level.sentryName)
        w.raw(",\"message\":"); w.string(r.message)
        w.raw(",\"data\":{")
        var first = true
        if includeData {
            for (k, v) in r.attributes {
                if !first { w.comma() }
                w.key(k); w.attribute(v); first = false
            }
        }
        if !first { w.comma() }
        w.raw("\"code.function\":"); w.string(r.function)
        w.raw(",\"code.filepath\":"); w.string(r.file)
        w.raw(",\"code.lineno\":"); w.int(Int(r.line))
        if let t = r.traceID, let s = r.spanID {
            w.raw(",\"trace_id\":"); w.string(t)
            w.raw(",\"span_id\":"); w.string(s)
        }
        w.raw("}}")
        return w.bytes
    }

    /// Breadcrumbs for an event, oldest first.
    var snapshot: [JSONValue] {
        recent.withLock { $0 }.compactMap { try? JSONValue.parse(Data(Self.serialize($0, includeData: true))) }
    }
}
