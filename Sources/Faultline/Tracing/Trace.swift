// The tracing API: spans, the current trace context (a task-local), and W3C `traceparent` in and out.
import CFaultlineCrash
import Foundation
import Synchronization

/// Traces and spans. The current span lives in a `@TaskLocal`, so it follows `await`, `async let`
/// and task groups (child tasks inherit it). What does not inherit it:
/// - `Task.detached { }` starts with no current span (Swift does not copy task-locals into a
///   detached task): pass `span.context` along and use `Trace.withContext` inside.
/// - A plain `Thread` or a `DispatchQueue` block runs outside any task: no current span either.
/// - `Task { }` (unstructured, not detached) does copy it.
///
/// `startSpan` does not make the span current (there is no way to set a task-local without a
/// scope); `withSpan` does, for the closure it runs.
public enum Trace {
    /// The current span's context: nil outside any trace.
    static var current: SpanContext? { anyBound.load(ordering: .relaxed) ? bound : nil }

    @TaskLocal private static var bound: SpanContext?
    /// Set before the first context is bound anywhere. Until then no task or thread has a current
    /// span, and `current` skips the task-local lookup, which every log line would pay. Relaxed is
    /// enough: a context is visible only inside its binding scope, to the binding thread and to
    /// tasks it creates there, which all happen after the store.
    private static let anyBound = Atomic<Bool>(false)
    /// `$bound`, once `anyBound` is set.
    private static var binding: TaskLocal<SpanContext?> {
        if !anyBound.load(ordering: .relaxed) { anyBound.store(true, ordering: .relaxed) }
        return $bound
    }

    /// The current span's context, or nil outside any trace.
    public static var currentContext: SpanContext? { current }

    /// Starts a span, a child of the current span (or of the trace continued by
    /// `withTraceparent`); with neither, the first span of a new trace. End it with `end()` or
    /// `end(error:)`. The crash core records it as the calling thread's span until it ends.
    public static func startSpan(
        _ name: String, operation: String = "function",
        attributes: [String: AttributeValue] = [:]
    ) -> Span {
        startSpan(name, operation: operation, attributes: attributes, parent: current)
    }

    /// Starts a span with an explicit parent (e.g. a context carried into a detached task).
    public static func startSpan(
        _ name: String, operation: String = "function",
        attributes: [String: AttributeValue] = [:], parent: SpanContext?
    ) -> Span {
        let span = Span(name: name, operation: operation, attributes: attributes, parent: parent)
        ThreadSpanSlot.set(span.context)
        return span
    }

    /// A span that never becomes any thread's span in the crash core's slot: for spans that
    /// library threads start and end on an app's behalf (FaultlineURLSession's requests, run on
    /// URLSession's own threads, which belong to no task of the app).
    package static func startUnboundSpan(
        _ name: String, operation: String, attributes: [String: AttributeValue], parent: SpanContext?
    ) -> Span {
        Span(name: name, operation: operation, attributes: attributes, parent: parent, bindsThread: false)
    }

    /// Runs `body` inside a new span that is current for it; a thrown error ends the span failed
    /// (`internal_error`) and is rethrown unchanged.
    @discardableResult
    public static func withSpan<T>(
        _ name: String, operation: String = "function",
        attributes: [String: AttributeValue] = [:],
        _ body: (Span) throws -> T
    ) rethrows -> T {
        let span = startSpan(name, operation: operation, attributes: attributes)
        let c = SpanContext(span)
        do {
            let value = try binding.withValue(c) { try body(span) }
            span.end()
            return value
        } catch {
            span.end(error: error)
            throw error
        }
    }

    /// The `async` form: the span stays current across `await` and in child tasks.
    @discardableResult
    public static func withSpan<T>(
        _ name: String, operation: String = "function",
        attributes: [String: AttributeValue] = [:],
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Span) async throws -> T
    ) async rethrows -> T {
        let span = startSpan(name, operation: operation, attributes: attributes)
        let c = SpanContext(span)
        do {
            let value = try await binding.withValue(c) {
                let v = try await body(span)
                ThreadSpanSlot.set(c)  // the task may have resumed on another thread
                return v
            }
            span.end()
            return value
        } catch {
            span.end(error: error)
            throw error
        }
    }

    /// `00-<trace id>-<span id>-<flags>` for the current span, or `""` outside a trace.
    public static func traceparent() -> String {
        guard let c = current else { return "" }
        return Traceparent.format(c.traceID, c.spanID, c.flags)
    }

    /// The current `tracestate` (the caller's, forwarded unchanged), or nil.
    public static func tracestate() -> String? { current?.tracestate }

    /// Continues the trace an inbound `traceparent` names (consumer side of a request or queue):
    /// spans started in `body` are children of the remote parent and keep its sampling decision.
    /// A malformed or absent header starts a fresh trace instead (W3C: restart, drop tracestate).
    @discardableResult
    public static func withTraceparent<T>(
        _ header: String?, tracestate: String? = nil,
        _ body: () throws -> T
    ) rethrows -> T {
        try binding.withValue(continued(header, tracestate)) { try body() }
    }

    @discardableResult
    public static func withTraceparent<T>(
        _ header: String?, tracestate: String? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async rethrows -> T {
        try await binding.withValue(continued(header, tracestate)) { try await body() }
    }

    /// Makes `context` current for `body` (a detached task or thread carrying a span along).
    @discardableResult
    public static func withContext<T>(_ context: SpanContext?, _ body: () throws -> T) rethrows -> T {
        try binding.withValue(context) { try body() }
    }

    @discardableResult
    public static func withContext<T>(
        _ context: SpanContext?, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws -> T
    ) async rethrows -> T {
        try await binding.withValue(context) { try await body() }
    }

    /// The context a header continues, or a fresh unsampled-or-sampled root when it is unusable.
    static func continued(_ header: String?, _ tracestate: String?) -> SpanContext {
        if let h = header, let p = Traceparent(parsing: h) {
            return SpanContext(
                traceID: p.traceID, spanID: p.parentID, flags: p.flags.outgoing,
                tracestate: Tracestate.validated(tracestate), span: nil)
        }
        let sampled = TraceSampler.sample()
        return SpanContext(
            traceID: .random(), spanID: .random(), flags: sampled ? .sampled : [],
            tracestate: nil, span: nil, opensTrace: true)
    }

    /// Points the calling thread's crash-report slot at the current span when the slot names
    /// another trace or none: after a task hops threads, the new thread names the task's span from
    /// its next log line on. Within the same trace the slot is left alone, so a span started with
    /// `startSpan` (which is not the task-local current span) stays named until it ends. Outside
    /// any trace the slot is not touched (a manual span on this thread keeps it).
    static func refreshThreadSlot() {
        if let c = current { refreshThreadSlot(c) }
    }

    static func refreshThreadSlot(_ c: SpanContext) {
        var high: UInt64 = 0, low: UInt64 = 0, span: UInt64 = 0
        if faultline_trace_slot_get(&high, &low, &span) == 0, high == c.traceID.high, low == c.traceID.low { return }
        ThreadSpanSlot.set(c)
    }
}

extension SpanContext {
    init(_ span: Span) {
        self.init(
            traceID: span.context.traceID, spanID: span.context.spanID, flags: span.context.flags,
            tracestate: span.context.tracestate, span: span)
    }
}
