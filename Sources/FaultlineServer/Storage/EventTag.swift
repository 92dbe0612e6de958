// A tag as grouping records it beside a stack and the issues search matches it: a record type of
// its own, so ingest (EventFields reads tags from an event) and storage share it without either
// reaching into the other's files.

/// One `key: value` tag of an event, as the issues search matches it (keys in lower case).
public struct EventTag: Sendable, Hashable {
    public var key: String
    public var value: String
    public init(key: String, value: String) { self.key = key; self.value = value }
}
