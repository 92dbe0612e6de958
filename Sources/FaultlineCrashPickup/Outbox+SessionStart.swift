// Whether a session's opening update waits in the outbox (SessionUpdate.opens asks).
import FoundationEssentials
import FaultlineProtocol

extension Outbox {
    /// True when a queued envelope holds the `init: true` update of `sessionID`. Reads only the
    /// envelopes that can hold one (`session`, and `noevent` as sessions were queued before they had
    /// a name of their own), without removing any.
    func holdsSessionStart(_ sessionID: String) -> Bool {
        pending().contains { entry in
            guard entry.path.hasSuffix("-session.envelope") || entry.path.hasSuffix("-noevent.envelope"),
                let data = FileManager.default.contents(atPath: entry.path),
                let envelope = try? Envelope.parse(data)
            else { return false }
            return envelope.items.contains { item in
                guard item.type == "session", let update = (try? JSONValue.parse(item.payload)).flatMap(SessionPayload.init(json:)) else { return false }
                return update.sessionID == sessionID && update.initial
            }
        }
    }
}
