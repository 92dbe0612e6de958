// Sentry's list containers (`exception`, `threads`, `breadcrumbs`): the protocol writes them as
// `{"values": [...]}`, but SDKs also send a bare array (sentry-go always does) or one object
// without `values` (a single exception), and Sentry's ingestion (Relay's `Values<T>`) reads all
// three. Old SDKs name interfaces by their legacy key (`sentry.interfaces.Exception`). Every
// reader in Faultline reads the protocol's form; this file turns the other forms into it, once,
// where an event comes in (the server's ingest, the CLI's event input).
import FoundationEssentials

public enum SentryValues {
    /// The members that are `Values<T>` containers.
    public static let containerKeys = ["exception", "threads", "breadcrumbs"]

    /// Legacy interface names and the member each stands for (Relay's `legacy_alias`). A member
    /// already under its modern name wins.
    public static let legacyAliases: [(legacy: String, modern: String)] = [
        ("sentry.interfaces.Exception", "exception"), ("sentry.interfaces.Stacktrace", "stacktrace"),
        ("sentry.interfaces.Message", "logentry"), ("sentry.interfaces.User", "user"), ("sentry.interfaces.Http", "request")
    ]

    /// The top-level keys whose presence or form can make an event need `normalised`: a reader
    /// that builds only some members (ingest's parse) keeps these to ask `needsNormalising`.
    public static let keysToCheck: Set<String> = Set(containerKeys + legacyAliases.map(\.legacy))

    /// Whether `event` holds a container in another form than `{"values": [...]}`, or a legacy name.
    public static func needsNormalising(_ event: JSONValue) -> Bool {
        guard case .object(let top) = event else { return false }
        for key in containerKeys {
            if let value = top[key], isOtherForm(value) { return true }
        }
        return legacyAliases.contains { top[$0.legacy] != nil }
    }

    /// `event` with every container in the protocol's form and every legacy name under its modern
    /// one, or nil when it already was (nothing to rewrite). An empty object or `null` container is
    /// dropped, as Relay drops it.
    public static func normalised(_ event: JSONValue) -> JSONValue? {
        guard case .object(var top) = event, needsNormalising(event) else { return nil }
        for (legacy, modern) in legacyAliases {
            guard let value = top.removeValue(forKey: legacy) else { continue }
            if top[modern] == nil { top[modern] = value }
        }
        for key in containerKeys {
            guard let value = top[key], isOtherForm(value) else { continue }
            top[key] = container(value)
        }
        return .object(top)
    }

    /// The event's bytes and tree in normal form when `parsed` (a reading of `bytes`, in full or of
    /// at least `keysToCheck`) says it is not; nil when it is. The event is read again in full, so
    /// the rewritten event keeps every member.
    public static func normalised(_ bytes: Data, parsed: JSONValue) throws(JSONParser.Failure) -> (JSONValue, Data)? {
        guard needsNormalising(parsed), let event = normalised(try JSONParser.parse(bytes)) else { return nil }
        return (event, event.serialized())
    }

    private static func isOtherForm(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .null: return true
        case .object(let o): return o["values"] == nil
        default: return false
        }
    }

    /// `{"values": [...]}` for a bare array or one object; nil (no member) for an empty object or
    /// null. A non-container value is left as it is, for readers to ignore as before.
    private static func container(_ value: JSONValue) -> JSONValue? {
        switch value {
        case .array: return ["values": value]
        case .object(let o): return o.isEmpty ? nil : ["values": [value]]
        case .null: return nil
        default: return value
        }
    }
}
