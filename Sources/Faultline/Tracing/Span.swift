// One span: a named, timed piece of work in a trace, ended once with a status.
import CFaultlineCrash
import Foundation
import Synchronization

/// A span started with `Trace.startSpan` or `Trace.withSpan`. End it exactly once; later ends
/// are ignored. Thread-safe: attributes may be set from any task while it runs.
public final class Span: Sendable {
    public let name: String
    /// Sentry's `op` (what kind of work: `function`, `http.client`, `db.query`…).
    public let operation: String
    public let context: SpanContext
    /// The span this one continues: a local span, or the remote caller's (from `traceparent`).
    public let parentSpanID: SpanID?
    let transaction: TransactionRecorder?  // nil: not sampled, nothing is recorded
    let parentContext: SpanContext?
    let start: LogTimestamp
    /// Whether start and end update the crash core's slot of the thread they run on (not for
    /// spans URLSession's own threads run, which belong to no task of the app).
    let bindsThread: Bool

    struct State {
        var attributes: [String: AttributeValue]
        var status: SpanStatus?
        var ended = false
    }
    let state: Mutex<State>

    init(name: String, operation: String, attributes: [String: AttributeValue], parent: SpanContext?, bindsThread: Bool = true) {
        self.bindsThread = bindsThread
        self.name = name
        self.operation = operation
        self.parentContext = parent
        let spanID = SpanID.random()
        if let parent {
            parentSpanID = parent.opensTrace ? nil : parent.spanID
            context = SpanContext(traceID: parent.traceID, spanID: spanID, flags: parent.flags, tracestate: parent.tracestate, span: nil)
            // A local parent shares its transaction; a remote parent makes this span a transaction.
            transaction = parent.flags.contains(.sampled) ? (parent.span?.transaction ?? TransactionRecorder(rootSpanID: spanID)) : nil
        } else {
            parentSpanID = nil
            let sampled = TraceSampler.sample()
            context = SpanContext(
                traceID: .random(), spanID: spanID, flags: sampled ? .sampled : [],
                tracestate: nil, span: nil)
            transaction = sampled ? TransactionRecorder(rootSpanID: spanID) : nil
        }
        state = Mutex(State(attributes: attributes))
        start = .now()
    }

    /// True for the span that becomes the `transaction` item (the first local span of a trace here).
    public var isTransaction: Bool { transaction.map { $0.rootSpanID == context.spanID } ?? (parentContext?.span == nil) }

    /// `traceparent` naming this span as the parent of a downstream call.
    public var traceparent: String { Traceparent.format(context.traceID, context.spanID, context.flags) }

    public func setAttribute(_ key: String, _ value: AttributeValue) {
        state.withLock { $0.attributes[key] = value }
    }

    public func setAttributes(_ attributes: [String: AttributeValue]) {
        state.withLock { s in for (k, v) in attributes { s.attributes[k] = v } }
    }

    /// Sets the status `end()` reports (default `ok`).
    public func setStatus(_ status: SpanStatus) {
        state.withLock { $0.status = status }
    }

    /// Ends the span with its status (`ok` unless set). Only the first end counts.
    public func end() { finish(status: nil, error: nil) }

    /// Ends the span as failed (`internal_error` unless a status was set), recording the error's
    /// type and description as attributes.
    public func end(error: any Error) { finish(status: .internalError, error: error) }

    func finish(status: SpanStatus?, error: (any Error)?) {
        let now = LogTimestamp.now()
        let snapshot: State? = state.withLock { s in
            if s.ended { return nil }
            s.ended = true
            if let status, s.status == nil { s.status = status }
            if let error {
                s.attributes["error.type"] = .string(String(reflecting: type(of: error)))
                s.attributes["error.message"] = .string(String(describing: error))
            }
            return s
        }
        guard let snapshot else { return }
        // The thread that ends a span goes back to its parent (crash reports name it).
        if bindsThread { ThreadSpanSlot.set(parentContext) }
        transaction?.finished(self, state: snapshot, end: now)
    }
}
