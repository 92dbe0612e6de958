// Path patterns of the route table: literal segments, *, a|b and a trailing **.
import Foundation

/// A path pattern: `/api/0/projects/*/*/issues`. `*` is one component, `a|b` one of the names,
/// and a trailing `**` any number of components (none included). Matching yields the components
/// that `*`, `a|b` and `**` stood for, in order.
struct RoutePattern: Sendable, CustomStringConvertible {
    enum Segment: Sendable { case literal(String), oneOf(Set<String>), any, rest }
    let segments: [Segment]
    let description: String

    init(_ pattern: String) {
        description = pattern
        segments = pattern.split(separator: "/").map { s in
            switch s {
            case "*": .any
            case "**": .rest
            default: s.contains("|") ? .oneOf(Set(s.split(separator: "|").map(String.init))) : .literal(String(s))
            }
        }
    }

    func match(_ path: [String]) -> [String]? {
        var captures: [String] = []
        for (i, segment) in segments.enumerated() {
            if case .rest = segment { return captures + path.dropFirst(i) }
            guard i < path.count else { return nil }
            switch segment {
            case .literal(let l): guard path[i] == l else { return nil }
            case .oneOf(let names): guard names.contains(path[i]) else { return nil }; captures.append(path[i])
            case .any: captures.append(path[i])
            case .rest: break
            }
        }
        return path.count == segments.count ? captures : nil
    }
}
