// An event as people and scripts read it (the issue page, the event APIs): what the server adds
// to the client's bytes, and what it keeps from whoever reads them.
import FaultlineProtocol

extension StoredEvent {
    /// The stored event with the user's address filled in as the event asked (InferredIPAddress,
    /// from the address kept with the occurrence) and secrets filtered (SensitiveData).
    static func decodeForReading(_ occurrence: StoredOccurrence) throws -> JSONValue {
        let event = try decode(occurrence.compressedEvent)
        return SensitiveData.scrubbed(InferredIPAddress.filled(event, client: occurrence.clientAddress) ?? event)
    }
}
