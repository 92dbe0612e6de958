// Log lines waiting to become `log` envelope items; filled on the caller's thread, drained on the SDK's.
import Foundation
import FaultlineProtocol
import Synchronization

final class LogBuffer: Sendable {
    static let shared = LogBuffer()
    /// Lines kept in memory between flushes; beyond that the oldest are dropped and counted.
    static let capacity = 10_000
    /// Logs per envelope item (a 413 halves it for that envelope).
    static let batchSize = 100

    private struct State {
        var records: [LogRecord] = []  // a ring once full: `head` is the oldest
        var head = 0
        var dropped = 0
        var sendLevel: LogLevel = .warning
        var enabled = false
    }
    private let state = Mutex(State())
    /// `sendLevel` for the logging path without the lock: the level's raw value, -1 while off.
    private let sendLevelIndex = Atomic<Int>(-1)

    /// The lowest level that is sent, or nil while sending is off (no DSN).
    var sendLevel: LogLevel? {
        let i = sendLevelIndex.load(ordering: .relaxed)
        return i < 0 ? nil : LogLevel(rawValue: i)
    }

    func configure(enabled: Bool, level: LogLevel) {
        state.withLock {
            $0.enabled = enabled; $0.sendLevel = level
            sendLevelIndex.store(enabled ? level.rawValue : -1, ordering: .relaxed)
        }
    }

    func append(_ r: LogRecord) {
        state.withLock { s in
            guard s.enabled else { return }
            if s.records.count < Self.capacity {
                s.records.append(r)
            } else {
                s.records[s.head] = r  // overwrite the oldest: O(1), never a shift
                s.head = (s.head + 1) % Self.capacity
                s.dropped += 1
            }
        }
    }

    func drain() -> (records: [LogRecord], dropped: Int) {
        state.withLock { s in
            let ordered = Array(s.records[s.head...] + s.records[..<s.head])
            defer { s.records = []; s.records.reserveCapacity(256); s.head = 0; s.dropped = 0 }
            return (ordered, s.dropped)
        }
    }

    /// Sentry's log item payload: `{"items":[{timestamp, trace_id, level, body, attributes}]}`.
    static func itemPayload(_ records: ArraySlice<LogRecord>, traceID: String, context: ScopeContext?) -> Data {
        var w = JSONWriter(capacity: records.count * 200)
        w.raw("{\"items\":[")
        for (i, r) in records.enumerated() {
            if i > 0 { w.comma() }
            w.raw("{\"timestamp\":"); w.double(r.timestamp.secondsSince1970)
            w.raw(",\"trace_id\":"); w.string(r.traceID ?? traceID)
            if let s = r.spanID { w.raw(",\"span_id\":"); w.string(s) }
            w.raw(",\"level\":"); w.string(r.level.sentryName)
            w.raw(",\"body\":"); w.string(r.message)
            w.raw(",\"attributes\":{")
            var attrs = r.attributes
            attrs["code.function"] = .string(r.function.description)
            attrs["code.filepath"] = .string(r.file.description)
            attrs["code.lineno"] = .int(Int(r.line))
            if let rel = context?.release { attrs["sentry.release"] = .string(rel) }
            if let env = context?.environment { attrs["sentry.environment"] = .string(env) }
            for (j, (k, v)) in attrs.sorted(by: { $0.key < $1.key }).enumerated() {
                if j > 0 { w.comma() }
                w.key(k); w.raw("{\"value\":"); w.attribute(v); w.raw(",\"type\":"); w.string(v.sentryType); w.raw("}")
            }
            w.raw("}}")
        }
        w.raw("]}")
        return Data(w.bytes)
    }
}
