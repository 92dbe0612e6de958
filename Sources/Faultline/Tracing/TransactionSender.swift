// Finished transactions into outbox envelopes, on one serial queue.
import Foundation
import FaultlineProtocol
import Synchronization

/// One serial queue turns finished transactions into outbox envelopes (not fsynced: traces are
/// worth less than the fsync on every request end). `Faultline.flush` and `close` drain it first.
final class TransactionSender: Sendable {
    static let shared = TransactionSender()
    private let queue = DispatchQueue(label: "faultline-traces")

    func send(_ build: @escaping @Sendable () -> (eventID: String, traceID: String, payload: [String: JSONValue])) {
        guard SDKState.shared.currentOutbox != nil else { return }  // not started: spans only propagate
        queue.async {
            let state = SDKState.shared
            guard let outbox = state.currentOutbox else { return }
            let t = build()
            var header = Faultline.envelopeHeader(eventID: t.eventID, dsn: state.dsn).objectValue ?? [:]
            var dsc: [String: JSONValue] = ["trace_id": .string(t.traceID), "sample_rate": .string(String(TraceSampler.rate)), "sampled": "true"]
            if let d = state.dsn { dsc["public_key"] = .string(d.publicKey.value) }
            if let r = state.context?.release { dsc["release"] = .string(r) }
            if let e = state.context?.environment { dsc["environment"] = .string(e) }
            header["trace"] = .object(dsc)
            let item = Envelope.Item(type: "transaction", payload: JSONValue.object(t.payload).serialized())
            outbox.enqueue(Envelope(header: .object(header), items: [item]), sync: false)
            Worker.shared?.wake()
        }
    }

    /// Waits until every transaction ended so far is in the outbox.
    func drain() { queue.sync {} }
}
