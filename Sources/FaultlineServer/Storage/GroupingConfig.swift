// Which grouping rules a project's new events follow. Grouping decides which issue an event
// joins, so a project's rules never change under it by an upgrade: projects that existed before
// a new version keep the one they had (schema migration 12 pins them, in `project_settings`), new projects get the
// newest, and an operator switches one explicitly (`faultline projects grouping`). Existing
// issues keep their events either way; only events grouped after a switch follow the new rules.
public enum GroupingConfig: Int, Sendable, CaseIterable, CustomStringConvertible {
    /// Native frames by symbol (or module offset); a non-native frame (Python, JavaScript) by its
    /// function name alone.
    case v1 = 1
    /// As v1, but a non-native frame by its module (or file, when the SDK names no module) and
    /// function, as Sentry groups them: `handle` in two modules is two issues.
    case v2 = 2
    /// As v2, but a browser script's frame (its file a URL) by the script's name without the
    /// URL's host, path, query and content hash (`ScriptURLName`), so a deploy does not split
    /// every issue of a web app; and a Rust legacy name without its `::h<hash>`, so a release
    /// does not split every issue of a Rust program.
    case v3 = 3
    /// As v3, and as Sentry: an event whose stack is on its current thread (a message sent with
    /// `attach_stacktrace`) groups by that stack; a chained exception by its causes' types too; an exception without a stack by its type and its
    /// value's pattern (numbers, ids, quoted values normalised), one without a type by its value;
    /// a non-native frame without a function by its file or module and its source line (an
    /// anonymous JavaScript or PHP top-level frame was no frame at all, so unrelated errors met in
    /// "unknown location").
    case v4 = 4

    /// What a project created now gets.
    public static let newProjects = GroupingConfig.v4

    public var description: String {
        switch self {
        case .v1: "1 (non-native frames by function)"
        case .v2: "2 (non-native frames by module and function)"
        case .v3: "3 (as 2, a browser script by its name without URL and content hash, Rust names without their hash)"
        case .v4: "4 (as 3, the current thread's stack, a stackless exception by type and value, anonymous frames by file and source line)"
        }
    }
}
