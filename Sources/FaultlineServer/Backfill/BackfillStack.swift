// What a backfill regroups: a stored stack with its signature decoded.
import Foundation

/// A stored stack with its signature read back (the store keeps it as bytes); a stack whose bytes
/// do not decode is skipped, as before the store stopped decoding them.
struct BackfillStack: Sendable {
    let signature: StackSignature
    let projectID: Int64
    let occurrences: Int64

    init?(_ stored: StoredStack) {
        guard let signature = StackSignature.decode(stored.signature) else { return nil }
        self.signature = signature
        self.projectID = stored.projectID
        self.occurrences = stored.occurrences
    }
}
