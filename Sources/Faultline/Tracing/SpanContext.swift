// The ids and sampling decision a span hands to its children and to outgoing requests.
import CFaultlineCrash
import Foundation
import Synchronization

/// The identity of a span as it propagates: what `traceparent` carries, plus the local span.
public struct SpanContext: Sendable {
    public let traceID: TraceID
    public let spanID: SpanID
    public let flags: TraceFlags
    /// The caller's `tracestate`, forwarded unchanged (we add no entry).
    public let tracestate: String?
    /// The local span, nil for a context continued from a header.
    let span: Span?
    /// A fresh trace (no usable `traceparent` came in): `spanID` names no span anywhere, so the
    /// first span under it is the trace's root, with no parent.
    var opensTrace = false

    public var isSampled: Bool { flags.contains(.sampled) }
    public var traceparent: String { Traceparent.format(traceID, spanID, flags) }
}
