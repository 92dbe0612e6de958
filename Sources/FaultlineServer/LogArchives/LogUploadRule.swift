// Which rolled logs a project accepts: the upload switch and its line patterns.
import Foundation

/// One rule of the remote switch: log upload off (or on) for a whole project, one release of
/// it, or one install. The most specific rule wins: install, then release, then project;
/// without any rule uploads are on.
public struct LogUploadRule: Sendable, Equatable {
    public enum Scope: String, Sendable, CaseIterable { case project, release, install }
    public var projectID: Int64
    public var scope: Scope
    /// The release or install id ("" for the project scope).
    public var value: String
    public var enabled: Bool
    public var changed: Double

    public init(projectID: Int64, scope: Scope, value: String, enabled: Bool, changed: Double = Date().timeIntervalSince1970) {
        self.projectID = projectID; self.scope = scope; self.value = value; self.enabled = enabled; self.changed = changed
    }

    /// Why `value` can never match an upload of `scope`, or nil when it can: a rule holds what an
    /// upload's headers may carry (LogArchiveReceiver's rules), so an install is 1–64 characters of
    /// `[A-Za-z0-9._-]` and a release 1–200 bytes of text without control characters.
    public static func problem(scope: Scope, value: String) -> String? {
        switch scope {
        case .project: return value.isEmpty ? nil : "a project rule has no value"
        case .install:
            return LogArchiveReceiver.isToken(value, max: 64) ? nil : "an install id is 1–64 characters of [A-Za-z0-9._-]"
        case .release:
            let fits = !value.isEmpty && value.utf8.count <= 200 && !value.unicodeScalars.contains { $0.properties.generalCategory == .control }
            return fits ? nil : "a release is 1–200 bytes of text without control characters"
        }
    }

    /// Whether uploads are on for this release and install under `rules` (of one project).
    public static func isEnabled(_ rules: [LogUploadRule], release: String?, installID: String?) -> Bool {
        if let i = installID, let r = rules.first(where: { $0.scope == .install && $0.value == i }) { return r.enabled }
        if let v = release, let r = rules.first(where: { $0.scope == .release && $0.value == v }) { return r.enabled }
        if let r = rules.first(where: { $0.scope == .project }) { return r.enabled }
        return true
    }
}
