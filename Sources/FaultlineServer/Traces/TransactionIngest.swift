// What ingest does with traces: decodes `transaction` items, stores them through `TraceStore`,
// and names the trace an event's `contexts.trace` links it to (stored with the event: `IncomingEvent.traceID`).
import Foundation
import FaultlineProtocol

enum TransactionIngest {
    /// Separates `transaction` items (decoded and validated) from the items stored as they are.
    static func split(_ items: [Envelope.Item], projectID: Int64, received: Double, envelopeEventID: String?) throws(IngestError)
        -> (rest: [Envelope.Item], transactions: [IncomingTransaction])
    {
        var rest: [Envelope.Item] = [], transactions: [IncomingTransaction] = []
        for item in items {
            if item.type == "transaction" {
                transactions.append(
                    try TransactionDecoder.decode(
                        item.payload, projectID: projectID, received: received,
                        envelopeEventID: envelopeEventID))
            } else {
                rest.append(item)
            }
        }
        return (rest, transactions)
    }

    /// Stores the transactions; without a trace store they are dropped.
    static func store(_ transactions: [IncomingTransaction], in traces: (any TraceStore)?) throws {
        guard !transactions.isEmpty, let traces else { return }
        try traces.storeTransactions(transactions)
    }

    /// The event's `contexts.trace` (trace_id, span_id), when it names a valid trace.
    static func traceContext(of event: JSONValue) -> (traceID: String, spanID: String?)? {
        let t = event["contexts"]?["trace"]
        guard let id = TransactionDecoder.hexID(t?["trace_id"]?.stringValue, 32) else { return nil }
        return (id, TransactionDecoder.hexID(t?["span_id"]?.stringValue, 16))
    }
}
