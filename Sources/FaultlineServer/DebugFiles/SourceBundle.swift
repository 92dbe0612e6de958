// Sentry's source bundles (`sentry-cli debug-files upload --include-sources`, `debug-files
// bundle-sources`): an 8-byte header (`SYSB` and a version), then a ZIP with `manifest.json` naming the debug file (`code_id`: its build-id,
// `debug_id`) and, for each member under `files/`, the absolute path the source had at build
// time. Read here into the same source store `faultline upload --include-sources` fills
// (SourceFiles), so debuginfod's `/source` and the issue page show the lines either way.
//
// The ZIP reader takes what the format needs and no more: the central directory (found from
// its end record), members stored or deflated; no ZIP64, encryption or multi-disk archives.
// Everything a client states is bounded: member count, each member's and the total size
// inflated, names; a member must lie inside the file.
import Foundation
import FaultlineProtocol

enum SourceBundle {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    struct Member {
        var name: String
        var method: UInt16
        var compressedSize: Int
        var size: Int
        var localHeader: Int
    }

    /// Source files one debug file may have (the upload endpoint's limit too: SourceFiles).
    static let maxFiles = 20_000
    static let maxMembers = maxFiles + 1  // and the manifest
    static let maxMemberBytes = 64 << 20
    static let maxTotalBytes = 1 << 30

    /// Whether the file begins as a bundle does: Sentry's `SYSB` header (magic and a version)
    /// before the ZIP, or a bare ZIP's local file header.
    static func isBundle(path: String) -> Bool {
        guard let fh = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? fh.close() }
        let head = (try? fh.read(upToCount: 4)) ?? Data()
        return head == Data("SYSB".utf8) || head == Data([0x50, 0x4B, 0x03, 0x04])
    }

    /// The bundle's debug file, its sources handed to `each` one at a time (absolute path as
    /// built, contents), so a bundle costs the memory of its largest member, not of all of them.
    static func read(path: String, each: (String, Data) throws -> Void) throws -> BuildID {
        try read(try Data(contentsOf: URL(fileURLWithPath: path), options: .alwaysMapped), each: each)
    }

    /// The same, all sources at once (tests, the fuzz target: small bundles).
    static func read(_ zip: Data) throws -> (buildID: BuildID, files: [(path: String, data: Data)]) {
        var files: [(path: String, data: Data)] = []
        let buildID = try read(zip) { files.append(($0, $1)) }
        return (buildID, files)
    }

    static func read(_ zip: Data, each: (String, Data) throws -> Void) throws -> BuildID {
        let members = Dictionary(try centralDirectory(zip).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        guard let manifestMember = members["manifest.json"] else { throw Failure(description: "no manifest.json") }
        let manifest: JSONValue
        do { manifest = try JSONParser.parse(try contents(of: manifestMember, in: zip)) } catch let f as Failure { throw f } catch {
            throw Failure(description: "manifest.json is not JSON: \(error)")
        }
        guard let codeID = manifest["code_id"]?.stringValue, let buildID = BuildID(hex: codeID), buildID.bytes.count >= 4 else {
            throw Failure(description: "the manifest names no code_id (the debug file's build-id)")
        }
        let entries = manifest["files"]?.objectValue?.members ?? []
        guard entries.count <= maxFiles else { throw Failure(description: "the manifest names more than \(maxFiles) files") }
        var total = 0
        for entry in entries {
            guard entry.value["type"]?.stringValue ?? "source" == "source", let sourcePath = entry.value["path"]?.stringValue else { continue }
            guard let member = members[entry.key] else {
                throw Failure(description: "the manifest names \(entry.key), which is not in the bundle")
            }
            guard member.size <= maxTotalBytes - total else { throw Failure(description: "the bundle's sources exceed \(maxTotalBytes) bytes") }
            let data = try contents(of: member, in: zip)
            total += data.count
            try each(sourcePath, data)
        }
        return buildID
    }

    private static func u16(_ d: Data, _ at: Int) throws -> Int {
        guard at >= 0, at + 2 <= d.count else { throw Failure(description: "the ZIP is cut short") }
        return Int(d[d.startIndex + at]) | Int(d[d.startIndex + at + 1]) << 8
    }

    private static func u32(_ d: Data, _ at: Int) throws -> Int {
        let low = try u16(d, at), high = try u16(d, at + 2)
        return low | high << 16
    }

    /// The members the central directory lists.
    static func centralDirectory(_ zip: Data) throws -> [Member] {
        // The end record is in the last 22 bytes plus at most a 64 KiB comment.
        var end = -1
        var at = zip.count - 22
        while at >= 0 && at >= zip.count - 22 - 65_535 {
            if try u32(zip, at) == 0x0605_4B50 { end = at; break }
            at -= 1
        }
        guard end >= 0 else { throw Failure(description: "not a ZIP (no end of central directory)") }
        let count = try u16(zip, end + 10)
        let size = try u32(zip, end + 12)
        let offset = try u32(zip, end + 16)
        guard count <= maxMembers else { throw Failure(description: "more than \(maxMembers) members") }
        if count == 0xFFFF || offset == 0xFFFF_FFFF { throw Failure(description: "ZIP64 bundles are not read") }
        // Offsets count from the ZIP's own start: after Sentry's 8-byte `SYSB` header, or any
        // other prefix, where the directory's end says it is.
        let base = end - size - offset
        guard base >= 0 else { throw Failure(description: "a damaged end of central directory") }
        var members: [Member] = []
        var p = base + offset
        for _ in 0..<count {
            guard try u32(zip, p) == 0x0201_4B50 else { throw Failure(description: "a damaged central directory") }
            let flags = try u16(zip, p + 8)
            guard flags & 1 == 0 else { throw Failure(description: "encrypted members are not read") }
            let nameLength = try u16(zip, p + 28), extraLength = try u16(zip, p + 30), commentLength = try u16(zip, p + 32)
            guard p + 46 + nameLength <= zip.count else { throw Failure(description: "the ZIP is cut short") }
            let nameStart = zip.startIndex + p + 46
            let name = String(decoding: zip[nameStart..<nameStart + nameLength], as: UTF8.self)
            members.append(
                Member(
                    name: name, method: UInt16(try u16(zip, p + 10)), compressedSize: try u32(zip, p + 20), size: try u32(zip, p + 24),
                    localHeader: base + (try u32(zip, p + 42))))
            p += 46 + nameLength + extraLength + commentLength
        }
        return members
    }

    /// A member's bytes, inflated, bounded.
    static func contents(of m: Member, in zip: Data) throws -> Data {
        guard m.size <= maxMemberBytes else { throw Failure(description: "\(m.name) is over \(maxMemberBytes) bytes") }
        guard try u32(zip, m.localHeader) == 0x0403_4B50 else { throw Failure(description: "\(m.name): a damaged local header") }
        let nameLength = try u16(zip, m.localHeader + 26), extraLength = try u16(zip, m.localHeader + 28)
        let start = m.localHeader + 30 + nameLength + extraLength
        guard start >= 0, m.compressedSize >= 0, start + m.compressedSize <= zip.count else { throw Failure(description: "\(m.name) lies outside the ZIP") }
        let raw = zip[(zip.startIndex + start)..<(zip.startIndex + start + m.compressedSize)]
        switch m.method {
        case 0:
            guard raw.count == m.size else { throw Failure(description: "\(m.name): stored size disagrees") }
            return Data(raw)
        case 8:
            do {
                let data = try Inflate.inflate(Data(raw), limit: m.size, format: .raw)
                guard data.count == m.size else { throw Failure(description: "\(m.name): inflated size disagrees") }
                return data
            } catch let f as Failure { throw f } catch { throw Failure(description: "\(m.name): \(error)") }
        default:
            throw Failure(description: "\(m.name): compression method \(m.method) is not read")
        }
    }
}
