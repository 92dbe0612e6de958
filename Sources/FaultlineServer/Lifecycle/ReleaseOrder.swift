// Which of two releases is newer: by their semantic versions when both are semver of one package
// (`app@1.10.0` after `app@1.9.3`, as Sentry orders them), else the order in which the server first
// heard of them — created through the releases API (`sentry-cli releases new`, run by CI before it
// ships), named as the release an issue is resolved in, or otherwise first seen on an event (the
// alert evaluator notes each release it meets): dates and commit hashes order correctly this way.
import Foundation

enum ReleaseOrder {
    /// Records `version` for the project if it is new (first seen now).
    static func note(_ c: any SQLSession, projectID: Int64, version: String, now: Double) throws {
        try c.execute(
            "INSERT INTO releases(project_id, version, created) VALUES(?, ?, ?) ON CONFLICT(project_id, version) DO NOTHING",
            .int(projectID), .text(version), .double(now))
    }

    /// The newest release of the project, nil when none is known.
    static func newest(_ c: any SQLSession, projectID: Int64) throws -> String? {
        try c.first("SELECT version FROM releases WHERE project_id = ? ORDER BY created DESC, version DESC LIMIT 1", .int(projectID)) { $0.text(0) }
            ?? nil
    }

    /// True when `release` came after `other`. A release the server never heard of is noted now,
    /// so it counts as the newest.
    static func isNewer(_ c: any SQLSession, projectID: Int64, _ release: String, than other: String) throws -> Bool {
        guard release != other else { return false }
        if let a = SemanticVersion(release), let b = SemanticVersion(other), a.isComparable(with: b) { return b < a }
        let now = Date().timeIntervalSince1970
        try note(c, projectID: projectID, version: release, now: now)
        try note(c, projectID: projectID, version: other, now: now)
        func created(_ v: String) throws -> Double {
            try c.first("SELECT created FROM releases WHERE project_id = ? AND version = ?", .int(projectID), .text(v)) { $0.double(0) } ?? now
        }
        let (a, b) = (try created(release), try created(other))
        return a > b  // first heard of at the same moment: no order, so not newer
    }
}
