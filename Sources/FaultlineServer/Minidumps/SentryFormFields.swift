// The event a minidump upload describes in its form fields, merged as Sentry merges them: the part
// `sentry` (or `sentry__1`, `sentry__2`, … — Electron splits a long one) is the event's JSON,
// `sentry[tags][k]=v`-style fields set one string each at their path, and any other plain field
// (Crashpad's own annotations: `prod`, `ver`, `guid`, …) is kept under `extra`.
import Foundation
import FaultlineProtocol

enum SentryFormFields {
    /// Bracketed paths deeper than this (`sentry[a][b]…`) are refused: nothing Sentry defines is.
    static let maxPathDepth = 8
    /// Plain annotation fields kept under `extra`, and the bytes each keeps.
    static let maxExtraFields = 64
    static let maxExtraValueBytes = 8 * 1024

    /// The event the fields describe (an empty object when they describe nothing). Throws 400 when
    /// the `sentry` JSON is not an object or a path is not one, 413 past `maxEventBytes`.
    static func event(_ fields: [MultipartPart], maxEventBytes: Int) throws(IngestError) -> JSONValue {
        var event = try baseEvent(fields, maxEventBytes: maxEventBytes)
        var extras = 0
        for field in fields {
            guard let name = field.name, name != "sentry", !name.hasPrefix("sentry__"), !MinidumpUpload.isFile(field) else { continue }
            let value = String(decoding: field.body, as: UTF8.self)
            if name.hasPrefix("sentry[") {
                guard let path = bracketPath(name.dropFirst("sentry".count)), !path.isEmpty, path.count <= maxPathDepth else {
                    throw .malformed("minidump upload: form field '\(name.prefix(100))' is not a sentry[key][key] path")
                }
                set(&event, path[...], .string(value))
            } else if extras < maxExtraFields, event["extra"]?[name] == nil {
                extras += 1
                var extra = event["extra"]?.objectValue ?? [:]
                extra[String(name.prefix(200))] = .string(AttachmentFields.bounded(value, maxExtraValueBytes) ?? "")
                event["extra"] = .object(extra)
            }
        }
        guard event.serialized().count <= maxEventBytes else {
            throw .tooLarge("minidump upload: the event in its form fields exceeds \(maxEventBytes) bytes")
        }
        return event
    }

    /// The `sentry` part, or the `sentry__N` parts joined in order of N.
    static func baseEvent(_ fields: [MultipartPart], maxEventBytes: Int) throws(IngestError) -> JSONValue {
        var json: Data?
        if let whole = fields.first(where: { $0.name == "sentry" }) {
            json = whole.body
        } else {
            let pieces = fields.compactMap { f -> (Int, Data)? in
                guard let n = f.name, n.hasPrefix("sentry__"), let i = Int(n.dropFirst("sentry__".count)) else { return nil }
                return (i, f.body)
            }
            if !pieces.isEmpty { json = pieces.sorted { $0.0 < $1.0 }.reduce(into: Data()) { $0.append($1.1) } }
        }
        guard let json else { return .object([:]) }
        guard json.count <= maxEventBytes else { throw .tooLarge("minidump upload: the sentry field is \(json.count) bytes; at most \(maxEventBytes) allowed") }
        let parsed: JSONValue
        do { parsed = try JSONParser.parse(json) } catch { throw .malformed("minidump upload: the sentry field: \(error)") }
        guard case .object = parsed else { throw .malformed("minidump upload: the sentry field must be a JSON object") }
        return parsed
    }

    /// `[tags][k]` → ["tags", "k"]; nil unless the text is one or more bracketed keys.
    static func bracketPath(_ text: Substring) -> [String]? {
        var path: [String] = []
        var rest = text
        while !rest.isEmpty {
            guard rest.first == "[", let close = rest.firstIndex(of: "]") else { return nil }
            let key = rest[rest.index(after: rest.startIndex)..<close]
            guard !key.isEmpty else { return nil }
            path.append(String(key))
            rest = rest[rest.index(after: close)...]
        }
        return path
    }

    /// Sets `value` at `path`, making objects on the way (a non-object in the way is replaced).
    static func set(_ target: inout JSONValue, _ path: ArraySlice<String>, _ value: JSONValue) {
        guard let key = path.first else { target = value; return }
        var object = target.objectValue ?? [:]
        var child = object[key] ?? .object([:])
        set(&child, path.dropFirst(), value)
        object[key] = child
        target = .object(object)
    }
}
