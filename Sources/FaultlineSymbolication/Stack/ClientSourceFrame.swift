// A frame the client resolved itself (Python, JavaScript, …): file, line, column, the source
// lines around it, and its local variables when the event still has them (the server stores
// `vars` only for a project that opted in: they can hold secrets).
import FaultlineProtocol

public struct ClientSourceFrame: Sendable, Hashable {
    public var file: String
    public var line: Int64?
    public var column: Int64?
    public var pre: [String]
    public var context: String?
    public var post: [String]
    /// Name and value (as JSON text, cut to `variableValueLimit` characters), in name order, at
    /// most `variableLimit` of them.
    public var variables: [Variable]

    public struct Variable: Sendable, Hashable {
        public var name: String
        public var value: String
    }
    public static let variableLimit = 50
    public static let variableValueLimit = 200

    /// Nil when the frame names no file.
    public init?(_ json: JSONValue) {
        guard let file = json["filename"]?.stringValue ?? json["abs_path"]?.stringValue ?? json["module"]?.stringValue, !file.isEmpty else { return nil }
        self.file = file
        line = json["lineno"]?.int64Value
        column = json["colno"]?.int64Value
        pre = (json["pre_context"]?.arrayValue ?? []).suffix(5).compactMap(\.stringValue)
        context = json["context_line"]?.stringValue
        post = (json["post_context"]?.arrayValue ?? []).prefix(5).compactMap(\.stringValue)
        variables = (json["vars"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.prefix(Self.variableLimit).map { name, value in
            let text = value.stringValue ?? value.jsonString
            return Variable(name: name, value: text.count > Self.variableValueLimit ? String(text.prefix(Self.variableValueLimit)) + "…" : text)
        }
    }

    public var location: String { file + (line.map { ":\($0)" } ?? "") + (column.map { ":\($0)" } ?? "") }
}
