// How a walked dump and the event the client described become one event, written once for ingest
// and for the backfill's walk again: what only the dump knows (the stacks, the modules, the
// exception, the walker's own `extra` notes) comes from the walk, anything else the client said
// wins, key by key inside `tags` and `contexts`.
import Foundation
import FaultlineProtocol

enum MinidumpEventMerge {
    /// Members the walk always sets: a new walk replaces them whole.
    static let walkedMembers: Set<String> = ["exception", "threads", "debug_meta"]
    /// Objects merged key by key: in `tags` and `contexts` the client's keys win (they describe
    /// the app), in `extra` the walk's (its notes on the walk change with it).
    static let clientWinsInside: Set<String> = ["tags", "contexts"]
    static let walkWinsInside: Set<String> = ["extra"]
    /// Threads kept with their stacks (the crashing one first), and frames per stack: a hostile
    /// dump's thousands of threads must not make an event no page can show.
    static let maxThreads = 256
    static let maxFramesPerStack = 256

    /// `base` (the client's event, or the stored event on a walk again) with the walk's stacks.
    static func merge(base: JSONValue, walked: JSONValue) -> JSONValue {
        var out = base.objectValue ?? [:]
        for (key, value) in walked.objectValue ?? [:] {
            if walkedMembers.contains(key) {
                out[key] = bounded(key, value)
            } else if clientWinsInside.contains(key) || walkWinsInside.contains(key), case .object(let walkedObject) = value {
                var object = out[key]?.objectValue ?? [:]
                for (name, v) in walkedObject where object[name] == nil || walkWinsInside.contains(key) { object[name] = v }
                out[key] = .object(object)
            } else if out[key] == nil {
                out[key] = value
            }
        }
        if out["platform"] == nil { out["platform"] = "native" }
        if out["level"] == nil { out["level"] = "fatal" }
        return .object(out)
    }

    static func bounded(_ key: String, _ value: JSONValue) -> JSONValue {
        switch key {
        case "threads":
            guard var values = value["values"]?.arrayValue else { return value }
            if values.count > maxThreads {
                let crashed = values.firstIndex { $0["crashed"]?.boolValue == true }
                var kept = Array(values.prefix(maxThreads))
                if let crashed, crashed >= maxThreads { kept[maxThreads - 1] = values[crashed] }
                values = kept
            }
            var threads = value
            threads["values"] = .array(values.map(boundedStack))
            return threads
        case "exception":
            guard let values = value["values"]?.arrayValue else { return value }
            var exception = value
            exception["values"] = .array(values.map(boundedStack))
            return exception
        default:
            return value
        }
    }

    /// Keeps the innermost `maxFramesPerStack` frames (Sentry lists them outermost first).
    static func boundedStack(_ holder: JSONValue) -> JSONValue {
        guard let frames = holder["stacktrace"]?["frames"]?.arrayValue, frames.count > maxFramesPerStack else { return holder }
        var out = holder
        var stacktrace = holder["stacktrace"] ?? .object([:])
        stacktrace["frames"] = .array(Array(frames.suffix(maxFramesPerStack)))
        out["stacktrace"] = stacktrace
        return out
    }
}
