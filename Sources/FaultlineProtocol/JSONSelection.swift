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
    /// The named members with their keys' byte lengths, when every name is ASCII (else empty): an
    /// ASCII key is looked up by length first, without hashing it (most keys of a frame or an
    /// event are no name of the selection, and differ in length from every name).
    private let asciiNamed: [(key: String, count: Int, member: Member)]
    private let namesAreASCII: Bool

    public init(_ named: [String: Member], othersWhole: Bool) {
        self.named = named
        self.othersWhole = othersWhole
        namesAreASCII = named.keys.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
        asciiNamed = namesAreASCII ? named.map { ($0.key, $0.key.utf8.count, $0.value) } : []
    }

    /// Only the named members, each built whole.
    public convenience init(only keys: Set<String>) {
        self.init(Dictionary(uniqueKeysWithValues: keys.map { ($0, Member.whole) }), othersWhole: false)
    }

    /// The rule for a member of an object read under this selection; `asciiCount`: the key's
    /// length when it is ASCII (nil: not known to be).
    @inline(__always) package func member(_ key: String, asciiCount: Int? = nil) -> Member {
        if let n = asciiCount, namesAreASCII {
            for name in asciiNamed where name.count == n && name.key == key { return name.member }
            return othersWhole ? .whole : .skipped
        }
        return named[key] ?? (othersWhole ? .whole : .skipped)
    }
}
