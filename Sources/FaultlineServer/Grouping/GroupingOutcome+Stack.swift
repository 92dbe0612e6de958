// Grouping hands the store a stack as what the store keeps of it: the encoded signature, its key
// and the build-ids its frames name (the store reads nothing inside the bytes).
import Foundation

extension GroupingOutcome {
    public init(
        occurrenceID: Int64, projectID: Int64, stack: StackSignature, stackEncoded: Data, stackKey: String,
        fingerprint: Fingerprint, timestamp: Double, release: String?, environment: String? = nil, tags: [EventTag] = []
    ) {
        self.init(
            occurrenceID: occurrenceID, projectID: projectID, stackEncoded: stackEncoded, stackKey: stackKey, stackBuildIDs: stack.buildIDs,
            fingerprint: fingerprint, timestamp: timestamp, release: release, environment: environment, tags: tags)
    }
}
