// Which parts of a document a reader builds (JSONParser.parseObject(_:selecting:)): the rest is
// validated as strictly but never becomes a JSONValue. Ingest reads a few dozen fields of an event
// whose breadcrumbs, registers and device details are most of its values; every string or object
// built is an allocation made and freed per event. A selection names members; one applied to an
// array applies to each element, and to a scalar it does nothing.
public final class JSONSelection: Sendable {
    public enum Member: Sendable {
        /// Built whole.
        case whole
        /// Built under a selection of its own.
        case selected(JSONSelection)
        /// Not built.
        case skipped
        /// Validated but not built, and kept as `null`: a reader that needs only to know the member
        /// is there (the form checks of `SentryValues`) sees it, and nothing of what it holds.
        case presenceOnly
    }

    package let named: [String: Member]
    /// Whether members not named are built whole (else they are skipped).
    package let othersWhole: Bool

    public init(_ named: [String: Member], othersWhole: Bool) {
        self.named = named
        self.othersWhole = othersWhole
    }

    /// Only the named members, each built whole.
    public convenience init(only keys: Set<String>) {
        self.init(Dictionary(uniqueKeysWithValues: keys.map { ($0, Member.whole) }), othersWhole: false)
    }

    /// The rule for a member of an object read under this selection.
    @inline(__always) package func member(_ key: String) -> Member { named[key] ?? (othersWhole ? .whole : .skipped) }
}
