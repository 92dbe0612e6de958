// What sentry-native's Crashpad backend sends beside the dump. Its handler uploads every file it
// was given as a file part named by the file's name, and sentry-native gives it three of its own:
// `__sentry-event` (the scope's event — release, environment, user, tags, contexts, sdk — as one
// MessagePack map) and `__sentry-breadcrumb1` / `__sentry-breadcrumb2` (two files it writes in
// turn, each breadcrumb a MessagePack map appended to the file). Sentry merges them into the
// event and stores none of them; so does this, by Sentry's rules: every non-null member of the
// attached event replaces the form's, and the two breadcrumb files are joined oldest file first
// (by each file's last timestamped breadcrumb) and cut to the longer file's count, the newest kept.
// Sentry drops a file over its size limit or one that does not decode; here such a file is kept
// as an ordinary attachment, and the event says why in `extra`, so nothing sent is lost.
import Foundation
import FaultlineProtocol

enum SentryNativeAttachments {
    static let eventName = "__sentry-event"
    static let breadcrumbNames = ["__sentry-breadcrumb1", "__sentry-breadcrumb2"]
    /// Sentry's limits for the two kinds (larger files are not merged).
    static let maxEventBytes = 100_000
    static let maxBreadcrumbBytes = 50_000

    static func isOurs(_ name: String) -> Bool { name == eventName || breadcrumbNames.contains(name) }

    /// Merges the parts among `files` that sentry-native wrote into `event`; returns the parts
    /// that stay attachments (every other file, and any of sentry-native's that could not be
    /// merged).
    static func merge(_ files: [MultipartPart], into event: inout JSONValue) -> [MultipartPart] {
        var kept: [MultipartPart] = []
        var notMerged: [String: JSONValue] = [:]
        var crumbFiles: [[JSONValue]] = []
        for part in files {
            guard let name = part.name, isOurs(name) else {
                kept.append(part)
                continue
            }
            if part.body.isEmpty { continue }  // sentry-native creates all three at start
            let limit = name == eventName ? maxEventBytes : maxBreadcrumbBytes
            guard part.body.count <= limit else {
                notMerged[name] = .string("\(part.body.count) bytes; at most \(limit) are merged")
                kept.append(part)
                continue
            }
            do {
                if name == eventName {
                    let attached = try MessagePack.value(part.body)
                    guard case .object(let members) = attached else { throw MessagePack.Failure.truncated(at: 0) }
                    var merged = event.objectValue ?? [:]
                    for (key, value) in members where value != .null { merged[key] = value }
                    event = .object(merged)
                } else {
                    crumbFiles.append(try MessagePack.values(part.body))
                }
            } catch {
                notMerged[name] = .string("not MessagePack: \(error)")
                kept.append(part)
            }
        }
        for crumbs in crumbFiles where !crumbs.isEmpty { event["breadcrumbs"] = joined(existing: event["breadcrumbs"], crumbs) }
        if !notMerged.isEmpty {
            var extra = event["extra"]?.objectValue ?? [:]
            extra["sentry_native.not_merged"] = .object(notMerged)
            event["extra"] = .object(extra)
        }
        return kept
    }

    /// Sentry's join of a breadcrumb file with what the event already holds (a list, or the
    /// `{"values": […]}` form): the file whose last timestamped breadcrumb is older goes first,
    /// and the result keeps the newest `max(count, count)`.
    static func joined(existing: JSONValue?, _ crumbs: [JSONValue]) -> JSONValue {
        let current = existing?.arrayValue ?? existing?["values"]?.arrayValue ?? []
        guard !current.isEmpty else { return .array(crumbs) }
        func lastTime(_ list: [JSONValue]) -> Double? { list.reversed().lazy.compactMap { SentryTimestamp.seconds($0["timestamp"]) }.first }
        let cap = max(current.count, crumbs.count)
        var joined = current + crumbs
        if let a = lastTime(current), let b = lastTime(crumbs), a > b { joined = crumbs + current }
        return .array(Array(joined.suffix(cap)))
    }
}
