// How a walked dump and the event the client described become one event, written once for ingest
// and for the backfill's walk again: what only the dump knows (the stacks, the modules, the
// exception, the walker's own `extra` notes) comes from the walk, anything else the client said
// wins, key by key inside `tags` and `contexts`. The walk's members come bounded
// (`MinidumpStackwalker.Limits`: threads, frames per thread and in all), so they are taken whole.
import Foundation
import FaultlineProtocol

enum MinidumpEventMerge {
    /// Members the walk always sets: a new walk replaces them whole.
    static let walkedMembers: Set<String> = ["exception", "threads", "debug_meta"]
    /// Objects merged key by key: in `tags` and `contexts` the client's keys win (they describe
    /// the app), in `extra` the walk's (its notes on the walk change with it).
    static let clientWinsInside: Set<String> = ["tags", "contexts"]
    static let walkWinsInside: Set<String> = ["extra"]

    /// `base` (the client's event, or the stored event on a walk again) with the walk's stacks.
    static func merge(base: JSONValue, walked: JSONValue) -> JSONValue {
        var out = base.objectValue ?? [:]
        for (key, value) in walked.objectValue ?? [:] {
            if walkedMembers.contains(key) {
                out[key] = value
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
}
