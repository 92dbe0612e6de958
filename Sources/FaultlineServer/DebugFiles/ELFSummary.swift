// What the server needs to know about an uploaded file, read from its own bytes: is it an ELF,
// its GNU build-id, whether it carries DWARF, a symbol table, and code (an executable).
import Foundation
import FaultlineProtocol

public struct ELFSummary: Sendable, Equatable {
    public var buildID: BuildID
    public var hasDebugInfo: Bool
    public var hasSymbols: Bool
    /// Has loadable code (`.text` with contents), as opposed to a `--only-keep-debug` companion file.
    public var isExecutable: Bool
    public var machine: UInt16

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notELF
        case unsupported(String)
        case truncated(String)
        case noBuildID
        public var description: String {
            switch self {
            case .notELF: return "not an ELF file (no \\x7fELF magic); only ELF debug files and executables are accepted"
            case .unsupported(let s): return "unsupported ELF: \(s)"
            case .truncated(let s): return "truncated or corrupt ELF: \(s)"
            case .noBuildID: return "the ELF file has no GNU build-id note (link with -Wl,--build-id)"
            }
        }
    }

    /// Parses ELF64 little-endian section headers from a file on disk.
    public static func read(path: String) throws(Failure) -> ELFSummary {
        guard let fh = FileHandle(forReadingAtPath: path) else { throw .truncated("cannot open") }
        defer { try? fh.close() }
        func bytes(_ offset: UInt64, _ count: Int) throws(Failure) -> Data {
            do {
                try fh.seek(toOffset: offset)
                let d = try fh.read(upToCount: count) ?? Data()
                guard d.count == count else { throw Failure.truncated("read of \(count) bytes at \(offset) hit end of file") }
                return d
            } catch let f as Failure { throw f } catch { throw .truncated("\(error)") }
        }
        let header: Data
        do { header = try bytes(0, 64) } catch { throw .notELF }
        guard header.prefix(4) == Data([0x7f, 0x45, 0x4c, 0x46]) else { throw .notELF }
        guard header[4] == 2 else { throw .unsupported("only 64-bit ELF is supported") }
        guard header[5] == 1 else { throw .unsupported("only little-endian ELF is supported") }
        let machine = u16(header, 18)
        let shoff = u64(header, 40)
        let shentsize = Int(u16(header, 58)), shnum = Int(u16(header, 60)), shstrndx = Int(u16(header, 62))
        guard shoff > 0, shnum > 0, shnum < 65_000, shentsize == 64, shstrndx < shnum else { throw .truncated("no section headers") }
        let table = try bytes(shoff, shentsize * shnum)
        struct Section { let name: UInt32; let type: UInt32; let offset: UInt64; let size: UInt64 }
        let sections = (0..<shnum).map { i -> Section in
            let b = i * shentsize
            return Section(name: u32(table, b), type: u32(table, b + 4), offset: u64(table, b + 24), size: u64(table, b + 32))
        }
        let strtab = sections[shstrndx]
        guard strtab.size < 16 * 1024 * 1024 else { throw .truncated("section name table too large") }
        let names = try bytes(strtab.offset, Int(strtab.size))
        func name(_ s: Section) -> String {
            let start = Int(s.name)
            guard start < names.count else { return "" }
            let end = names[start...].firstIndex(of: 0) ?? names.count
            return String(decoding: names[start..<end], as: UTF8.self)
        }
        var buildID: BuildID?
        var hasDebug = false, hasSymbols = false, hasCode = false
        for s in sections {
            let n = name(s)
            if n == ".debug_info" || n == ".zdebug_info" { hasDebug = s.type != 8 && s.size > 0 }
            if s.type == 2 /* SHT_SYMTAB */ && s.size > 0 { hasSymbols = true }
            if n == ".text" && s.type != 8 /* SHT_NOBITS */ && s.size > 0 { hasCode = true }
            if s.type == 7 /* SHT_NOTE */ && buildID == nil && s.size < 1 << 20 {
                buildID = noteBuildID(try bytes(s.offset, Int(s.size)))
            }
        }
        guard let id = buildID else { throw .noBuildID }
        return ELFSummary(buildID: id, hasDebugInfo: hasDebug, hasSymbols: hasSymbols, isExecutable: hasCode, machine: machine)
    }

    /// Walks ELF notes for `NT_GNU_BUILD_ID` (type 3, owner "GNU").
    static func noteBuildID(_ d: Data) -> BuildID? {
        var p = 0
        while p + 12 <= d.count {
            let namesz = Int(u32(d, p)), descsz = Int(u32(d, p + 4)), type = u32(d, p + 8)
            let nameStart = p + 12
            let descStart = nameStart + ((namesz + 3) & ~3)
            guard descStart + descsz <= d.count else { return nil }
            if type == 3, namesz == 4, d[d.startIndex + nameStart ..< d.startIndex + nameStart + 3] == Data("GNU".utf8), descsz > 0 {
                return BuildID(bytes: [UInt8](d[d.startIndex + descStart ..< d.startIndex + descStart + descsz]))
            }
            p = descStart + ((descsz + 3) & ~3)
        }
        return nil
    }

    static func u16(_ d: Data, _ o: Int) -> UInt16 { UInt16(d[d.startIndex + o]) | UInt16(d[d.startIndex + o + 1]) << 8 }
    static func u32(_ d: Data, _ o: Int) -> UInt32 { (0..<4).reduce(UInt32(0)) { $0 | UInt32(d[d.startIndex + o + $1]) << (8 * $1) } }
    static func u64(_ d: Data, _ o: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 | UInt64(d[d.startIndex + o + $1]) << (8 * $1) } }
}
