// A JSON object's members: what `JSONValue.object` holds. Events are mostly small objects (a frame
// has five members, an image seven) that are built once, read a few times by key and dropped, so
// the members are kept in an array in the order they came and looked up by comparing keys: no key
// is hashed and no hash table is allocated per object, which a Dictionary did for every frame of
// every event ingested. An object that grows past `indexedBeyond` members also gets a key index, so
// a hostile document with a hundred thousand keys in one object is not read in quadratic time.
//
// It reads like a Dictionary (subscript by key, `keys`, `values`, `mapValues`, iteration as
// `(key, value)` pairs); a key appears once (setting it again replaces its value in place), and two
// objects are equal when they hold the same keys with equal values, whatever their order.
public struct JSONObject: Sendable {
    public struct Member: Sendable {
        public var key: String
        public var value: JSONValue
    }

    /// The members, in the order their keys were first set.
    public private(set) var members: [Member]
    /// Position of each key in `members`, kept only once the object has more than `indexedBeyond`.
    private var index: [String: Int]?

    /// Up to this many members a key is found by comparing keys one by one.
    static let indexedBeyond = 24

    public init() { members = [] }

    public init(minimumCapacity: Int) {
        members = []
        members.reserveCapacity(minimumCapacity)
    }

    public init(_ dictionary: [String: JSONValue]) {
        members = dictionary.map { Member(key: $0.key, value: $0.value) }
        if members.count > Self.indexedBeyond { rebuildIndex() }
    }

    /// The same members as a Dictionary (for callers that need one).
    public var dictionary: [String: JSONValue] {
        Dictionary(members.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    public var count: Int { members.count }
    public var isEmpty: Bool { members.isEmpty }
    public var keys: [String] { members.map(\.key) }
    public var values: [JSONValue] { members.map(\.value) }

    /// Where `key` is in `members`, if set.
    @inline(__always) func position(of key: String) -> Int? {
        if let index { return index[key] }
        // String equality, not bytes: canonically equivalent keys (`é` and `e` + U+0301) are one
        // key here as in the index and a Dictionary, whatever their UTF-8 lengths.
        for i in members.indices where members[i].key == key { return i }
        return nil
    }

    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { members[$0].value } }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    public subscript(key: String, default fallback: @autoclosure () -> JSONValue) -> JSONValue {
        get { self[key] ?? fallback() }
        set { self[key] = newValue }
    }

    /// Sets `key` to `value` (replacing its value where it is, or appending it) and returns the
    /// value it replaced.
    @discardableResult
    public mutating func updateValue(_ value: JSONValue, forKey key: String) -> JSONValue? {
        if let i = position(of: key) {
            let old = members[i].value
            members[i].value = value
            return old
        }
        members.append(Member(key: key, value: value))
        if index != nil {
            index![key] = members.count - 1
        } else if members.count > Self.indexedBeyond {
            rebuildIndex()
        }
        return nil
    }

    @discardableResult
    public mutating func removeValue(forKey key: String) -> JSONValue? {
        guard let i = position(of: key) else { return nil }
        let old = members.remove(at: i).value
        if index != nil { rebuildIndex() }
        return old
    }

    public func mapValues<T>(_ transform: (JSONValue) throws -> T) rethrows -> [String: T] {
        var out: [String: T] = [:]
        out.reserveCapacity(members.count)
        for m in members { out[m.key] = try transform(m.value) }
        return out
    }

    public func compactMapValues<T>(_ transform: (JSONValue) throws -> T?) rethrows -> [String: T] {
        var out: [String: T] = [:]
        for m in members { if let v = try transform(m.value) { out[m.key] = v } }
        return out
    }

    /// The members for which `isIncluded` holds, as an object (Dictionary's `filter`).
    public func filter(_ isIncluded: ((key: String, value: JSONValue)) throws -> Bool) rethrows -> JSONObject {
        var out = JSONObject()
        for m in members where try isIncluded((m.key, m.value)) { out.members.append(m) }
        if out.members.count > Self.indexedBeyond { out.rebuildIndex() }
        return out
    }

    public mutating func merge(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows {
        for m in other.members {
            if let i = position(of: m.key) {
                members[i].value = try combine(members[i].value, m.value)
            } else {
                updateValue(m.value, forKey: m.key)
            }
        }
    }

    public func merging(_ other: JSONObject, uniquingKeysWith combine: (JSONValue, JSONValue) throws -> JSONValue) rethrows -> JSONObject {
        var out = self
        try out.merge(other, uniquingKeysWith: combine)
        return out
    }

    /// The members in key order (String's `<`): how `JSONWriter` writes them.
    public var sortedByKey: [Member] { members.sorted { $0.key < $1.key } }

    private mutating func rebuildIndex() {
        var built: [String: Int] = [:]
        built.reserveCapacity(members.count)
        for (i, m) in members.enumerated() { built[m.key] = i }
        index = built
    }

    /// Appends a member whose key the caller knows is not set yet (the parser checks with
    /// `position(of:)` first).
    @inline(__always) mutating func appendNew(_ key: String, _ value: JSONValue) {
        members.append(Member(key: key, value: value))
        if index != nil {
            index![key] = members.count - 1
        } else if members.count > Self.indexedBeyond {
            rebuildIndex()
        }
    }

    /// Replaces the value at a position `position(of:)` gave.
    @inline(__always) mutating func replaceValue(at i: Int, with value: JSONValue) { members[i].value = value }
}

extension JSONObject: RandomAccessCollection {
    public typealias Element = (key: String, value: JSONValue)
    public var startIndex: Int { 0 }
    public var endIndex: Int { members.count }
    public subscript(position: Int) -> Element { (members[position].key, members[position].value) }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    /// A literal's later duplicate key wins, as it did for `JSONValue`'s dictionary literals.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(minimumCapacity: elements.count)
        for (k, v) in elements { updateValue(v, forKey: k) }
    }
}

extension JSONObject: Hashable {
    public static func == (a: JSONObject, b: JSONObject) -> Bool {
        guard a.members.count == b.members.count else { return false }
        for m in a.members {
            guard let v = b[m.key], v == m.value else { return false }
        }
        return true
    }

    /// Independent of member order, as equality is.
    public func hash(into hasher: inout Hasher) {
        var combined = 0
        for m in members {
            var h = Hasher()
            h.combine(m.key)
            h.combine(m.value)
            combined ^= h.finalize()
        }
        hasher.combine(members.count)
        hasher.combine(combined)
    }
}

extension JSONObject: Codable {
    public init(from decoder: Decoder) throws {
        self.init(try [String: JSONValue](from: decoder))
    }

    public func encode(to encoder: Encoder) throws {
        try dictionary.encode(to: encoder)
    }
}

extension JSONObject: CustomStringConvertible {
    public var description: String { "[" + sortedByKey.map { "\"\($0.key)\": \($0.value)" }.joined(separator: ", ") + "]" }
}
