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

    /// Splits `body` into parts in one pass: every search starts where the previous one ended
    /// and copies nothing (memmem over the body's bytes), so the cost is linear in the body, and
    /// the part count is checked as each part is found — a body of a million tiny parts stops at
    /// part `maxParts + 1`.
    public static func parse(_ body: Data, contentType: String?, maxParts: Int = .max) throws(Failure) -> [MultipartPart] {
        guard let b = boundary(contentType: contentType), !b.isEmpty, b.utf8.count <= 200 else { throw .noBoundary }
        let result: Result<[MultipartPart], Failure> = body.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return .failure(.malformed("boundary not found")) }
            let bytes = raw.bindMemory(to: UInt8.self)
            let delimiter = Array("\r\n--\(b)".utf8)  // a delimiter after the first is preceded by CRLF
            /// Offset of `needle` in bytes[from..<end], or nil.
            func find(_ needle: [UInt8], from: Int, end: Int? = nil) -> Int? {
                let limit = end ?? raw.count
                guard from <= limit else { return nil }
                // memchr for the first byte, memcmp for the rest: O(body × needle) at worst, and
                // the needle is at most 206 bytes, so linear in the body. (glibc's memmem is not
                // exported to Swift without _GNU_SOURCE.)
                return needle.withUnsafeBytes { n -> Int? in
                    var i = from
                    while limit - i >= n.count {
                        guard let hit = memchr(base + i, Int32(needle[0]), limit - i - n.count + 1) else { return nil }
                        let at = base.distance(to: UnsafeRawPointer(hit))
                        if memcmp(hit, n.baseAddress!, n.count) == 0 { return at }
                        i = at + 1
                    }
                    return nil
                }
            }
            func startsWith(_ s: StaticString, at i: Int) -> Bool {
                let n = s.utf8CodeUnitCount
                guard i + n <= raw.count else { return false }
                for k in 0..<n where bytes[i + k] != s.utf8Start[k] { return false }
                return true
            }
            var parts: [MultipartPart] = []
            // The first delimiter may open the body (no CRLF before it).
            guard let first = find(Array(delimiter.dropFirst(2)), from: 0) else { return .failure(.malformed("boundary not found")) }
            var pos = first + delimiter.count - 2
            while true {
                // After a delimiter: "--" ends the body, otherwise CRLF then part headers.
                if startsWith("--", at: pos) { break }
                guard startsWith("\r\n", at: pos) else { return .failure(.malformed("delimiter not followed by CRLF")) }
                pos += 2
                guard parts.count < maxParts else { return .failure(.malformed("more than \(maxParts) parts")) }
                // Part headers end within 16 KiB: search no further than that.
                let headerWindow = min(raw.count, pos + 16 * 1024 + 4)
                guard let headerEnd = find(Array("\r\n\r\n".utf8), from: pos, end: headerWindow) else {
                    return .failure(headerWindow < raw.count ? .malformed("part headers too long") : .malformed("part headers not terminated"))
                }
                let headerText = String(decoding: UnsafeRawBufferPointer(rebasing: raw[pos..<headerEnd]), as: UTF8.self)
                let contentStart = headerEnd + 4
                guard let next = find(delimiter, from: contentStart) else {
                    return .failure(.malformed("part is not terminated by the boundary"))
                }
                var part = MultipartPart(
                    name: nil, filename: nil, contentType: nil,
                    body: Data(UnsafeRawBufferPointer(rebasing: raw[contentStart..<next])))
                readHeaders(headerText, into: &part)
                parts.append(part)
                pos = next + delimiter.count
            }
            return .success(parts)
        }
        return try result.get()
    }

    static func readHeaders(_ headerText: String, into part: inout MultipartPart) {
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
    }
}
