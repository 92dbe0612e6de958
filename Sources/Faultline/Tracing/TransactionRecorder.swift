// Collects the finished spans of one local transaction and, when its root ends, sends them as one
// Sentry `transaction` envelope item through the outbox.
import Foundation
import FaultlineProtocol
import Synchronization

final class TransactionRecorder: Sendable {
    /// Sentry's span recorder keeps at most 1000 children; so do we, and count the rest.
    static let maxSpans = 1000
    let rootSpanID: SpanID

    private struct Finished {
        let span: Span
        let state: Span.State
        let end: LogTimestamp
    }
    private struct Inner {
        var children: [Finished] = []
        var dropped = 0
        var sent = false
    }
    private let inner = Mutex(Inner())

    init(rootSpanID: SpanID) { self.rootSpanID = rootSpanID }

    func finished(_ span: Span, state: Span.State, end: LogTimestamp) {
        if span.context.spanID != rootSpanID {
            inner.withLock { i in
                // A child ending after its transaction was sent is dropped, as Sentry does.
                if i.sent { return }
                if i.children.count < Self.maxSpans { i.children.append(Finished(span: span, state: state, end: end)) } else { i.dropped += 1 }
            }
            return
        }
        let (children, dropped) = inner.withLock { i in
            i.sent = true
            return (i.children, i.dropped)
        }
        let root = Finished(span: span, state: state, end: end)
        // Serialising and writing the envelope happens off the caller's thread.
        TransactionSender.shared.send { Self.payload(root: root, children: children, dropped: dropped) }
    }

    private static func time(_ t: LogTimestamp) -> JSONValue { .double(t.secondsSince1970) }

    private static func data(_ s: Span.State) -> JSONValue { .object(s.attributes.mapValues { $0.json }) }

    private static func payload(root: Finished, children: [Finished], dropped: Int) -> (eventID: String, traceID: String, payload: [String: JSONValue]) {
        let ctx = SDKState.shared.context
        let eventID = newEventID()
        let traceID = root.span.context.traceID.hex
        var trace: [String: JSONValue] = [
            "type": "trace", "trace_id": .string(traceID), "span_id": .string(root.span.context.spanID.hex),
            "op": .string(root.span.operation), "status": .string((root.state.status ?? .ok).rawValue),
            "origin": "manual", "data": data(root.state)
        ]
        if let p = root.span.parentSpanID { trace["parent_span_id"] = .string(p.hex) }
        let spans: [JSONValue] = children.map { c in
            var o: [String: JSONValue] = [
                "trace_id": .string(traceID), "span_id": .string(c.span.context.spanID.hex),
                "op": .string(c.span.operation), "description": .string(c.span.name),
                "start_timestamp": time(c.span.start), "timestamp": time(c.end),
                "status": .string((c.state.status ?? .ok).rawValue), "origin": "manual", "data": data(c.state)
            ]
            if let p = c.span.parentSpanID { o["parent_span_id"] = .string(p.hex) }
            return .object(o)
        }
        var base = ctx?.eventBase(eventID: eventID, level: "info") ?? ["event_id": .string(eventID), "platform": "native"]
        var contexts = base["contexts"]?.objectValue ?? [:]
        contexts["trace"] = .object(trace)
        base["contexts"] = .object(contexts)
        base["level"] = nil
        base["type"] = "transaction"
        base["transaction"] = .string(root.span.name)
        base["transaction_info"] = ["source": "custom"]
        base["start_timestamp"] = time(root.span.start)
        base["timestamp"] = time(root.end)
        base["spans"] = .array(spans)
        if dropped > 0 { base["_dropped_spans"] = .int(Int64(dropped)) }
        return (eventID, traceID, base)
    }
}
