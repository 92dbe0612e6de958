// Row → record mappings both stores share (they select the same columns in the same order).
import Foundation

enum IssueRows {
    static let columns = "id, project_id, fingerprint, title, culprit, first_seen, last_seen, count, symbolicated, merged_into"

    /// Without releases (a second query adds them).
    static func issue(_ r: any SQLRow) -> IssueRecord {
        IssueRecord(id: r.int(0), projectID: r.int(1), fingerprint: r.text(2) ?? "", title: r.text(3) ?? "", culprit: r.text(4) ?? "",
                    firstSeen: r.double(5), lastSeen: r.double(6), count: r.int(7), releases: [], symbolicated: r.int(8) != 0,
                    mergedInto: r.isNull(9) ? nil : r.int(9))
    }
}
