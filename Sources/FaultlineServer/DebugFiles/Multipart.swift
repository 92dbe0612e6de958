// multipart/form-data parsing for sentry-cli's chunk POST (parts are binary, lengths untrusted).
import Foundation

public struct MultipartPart: Sendable {
    public var name: String?
    public var filename: String?
    public var contentType: String?
    public var body: Data
}

public enum Multipart {
    public enum Failure: Error, CustomStringConvertible {
        case noBoundary, malformed(String)
        public var description: String {
            switch self {
            case .noBoundary: return "Content-Type must be multipart/form-data with a boundary"
            case .malformed(let s): return "malformed multipart body: \(s)"
            }
        }
    }

    public static func boundary(contentType: String?) -> String? {
        guard let ct = contentType, ct.lowercased().hasPrefix("multipart/") else { return nil }
        for param in ct.split(separator: ";").dropFirst() {
            let kv = param.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" {
                return kv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    public static func parse(_ body: Data, contentType: String?) throws(Failure) -> [MultipartPart] {
        guard let b = boundary(contentType: contentType), !b.isEmpty, b.count <= 200 else { throw .noBoundary }
        let delimiter = Data("--\(b)".utf8)
        var parts: [MultipartPart] = []
        guard var pos = body.range(of: delimiter)?.upperBound else { throw .malformed("boundary not found") }
        while true {
            // After a delimiter: "--" ends the body, otherwise CRLF then part headers.
            if body[pos...].starts(with: Data("--".utf8)) { break }
            guard body[pos...].starts(with: Data("\r\n".utf8)) else { throw .malformed("delimiter not followed by CRLF") }
            pos += 2
            guard let headerEnd = body.range(of: Data("\r\n\r\n".utf8), in: pos..<body.endIndex) else { throw .malformed("part headers not terminated") }
            guard headerEnd.lowerBound - pos <= 16 * 1024 else { throw .malformed("part headers too long") }
            let headerText = String(decoding: body[pos..<headerEnd.lowerBound], as: UTF8.self)
            let contentStart = headerEnd.upperBound
            guard let next = body.range(of: Data("\r\n".utf8) + delimiter, in: contentStart..<body.endIndex) else {
                throw .malformed("part is not terminated by the boundary")
            }
            var part = MultipartPart(name: nil, filename: nil, contentType: nil, body: body.subdata(in: contentStart..<next.lowerBound))
            for line in headerText.components(separatedBy: "\r\n") {
                let kv = line.split(separator: ":", maxSplits: 1)
                guard kv.count == 2 else { continue }
                let key = kv[0].trimmingCharacters(in: .whitespaces).lowercased()
                let value = kv[1].trimmingCharacters(in: .whitespaces)
                if key == "content-type" { part.contentType = value }
                if key == "content-disposition" {
                    for p in value.split(separator: ";").dropFirst() {
                        let pkv = p.split(separator: "=", maxSplits: 1)
                        guard pkv.count == 2 else { continue }
                        let v = pkv[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
                        switch pkv[0].trimmingCharacters(in: .whitespaces).lowercased() {
                        case "name": part.name = v
                        case "filename": part.filename = v
                        default: break
                        }
                    }
                }
            }
            parts.append(part)
            pos = next.upperBound
        }
        return parts
    }
}
