// Row → record mappings both stores share (they select the same columns in the same order).
import Foundation

enum IssueRows {
    static let columns = "id, project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated, merged_into"

    /// Without releases (a second query adds them).
    static func issue(_ r: any SQLRow) -> IssueRecord {
        IssueRecord(
            id: r.int(0), projectID: r.int(1), fingerprint: r.text(2) ?? "", title: r.text(3) ?? "", culprit: r.text(4) ?? "",
            firstSeen: r.double(5), lastSeen: r.double(6), count: r.int(7), releases: [], symbolicated: r.int(8) != 0,
            mergedInto: r.isNull(9) ? nil : r.int(9))
    }
}

enum OccurrenceRows {
    /// The issue column is the live issue the row belongs to (it may name one merged into it: IssueGroups).
    static let columns = "id, project_id, event_id, received, timestamp, release, \(IssueGroups.resolved("issue_id")), event, client_address"
    static let select = "SELECT \(columns) FROM occurrences"

    static func occurrence(_ r: any SQLRow) -> StoredOccurrence {
        StoredOccurrence(
            id: r.int(0), projectID: r.int(1), eventID: r.text(2) ?? "", received: r.double(3), timestamp: r.double(4),
            release: r.text(5), issueID: r.isNull(6) ? nil : r.int(6), compressedEvent: r.blob(7), clientAddress: r.text(8))
    }
}
