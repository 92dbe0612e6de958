// A frame the client resolved itself (Python, JavaScript, …): file, line, column and the source
// lines around it. `vars` are not kept: they can hold secrets.
import FaultlineProtocol

public struct ClientSourceFrame: Sendable, Hashable {
    public var file: String
    public var line: Int64?
    public var column: Int64?
    public var pre: [String]
    public var context: String?
    public var post: [String]

    /// Nil when the frame names no file.
    public init?(_ json: JSONValue) {
        guard let file = json["filename"]?.stringValue ?? json["abs_path"]?.stringValue ?? json["module"]?.stringValue, !file.isEmpty else { return nil }
        self.file = file
        line = json["lineno"]?.int64Value
        column = json["colno"]?.int64Value
        pre = (json["pre_context"]?.arrayValue ?? []).suffix(5).compactMap(\.stringValue)
        context = json["context_line"]?.stringValue
        post = (json["post_context"]?.arrayValue ?? []).prefix(5).compactMap(\.stringValue)
    }

    public var location: String { file + (line.map { ":\($0)" } ?? "") + (column.map { ":\($0)" } ?? "") }
}
