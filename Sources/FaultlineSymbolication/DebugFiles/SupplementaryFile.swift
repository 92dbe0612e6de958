// DWARF supplementary files: `dwz -m` moves DIEs and strings shared by several debug files into
// one file that each of them names — `.gnu_debugaltlink` (GNU: path + build-id) or DWARF 5's
// `.debug_sup` (path + checksum; dwz writes the build-id there). Without it, names, types and
// abstract origins that point into it (DW_FORM_GNU_ref_alt/strp_alt, DW_FORM_ref_sup/strp_sup) are
// unreadable, so such a debug file is used only together with its supplementary file.
import CDw
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// What a debug file says about its supplementary file.
public struct SupplementaryLink: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case gnuDebugAltLink = ".gnu_debugaltlink"
        case debugSup = ".debug_sup"
    }
    public var kind: Kind
    /// The path as written (absolute, or relative to the debug file's directory).
    public var name: String
    /// The supplementary file's build-id (`.gnu_debugaltlink`) or checksum (`.debug_sup`).
    public var identity: [UInt8]

    /// `identity` as a build-id (dwz puts the supplementary file's build-id in both sections).
    public var buildID: BuildID? { identity.isEmpty ? nil : BuildID(bytes: identity) }

    public var description: String {
        "\(kind.rawValue) names '\(name)'" + (buildID.map { " (build-id \($0.hex))" } ?? "")
    }

    /// Parses `.gnu_debugaltlink`: a NUL-terminated path, then the build-id bytes.
    static func parseAltLink(_ bytes: [UInt8]) -> SupplementaryLink? {
        guard let nul = bytes.firstIndex(of: 0), nul > 0 else { return nil }
        return SupplementaryLink(
            kind: .gnuDebugAltLink, name: String(decoding: bytes[..<nul], as: UTF8.self),
            identity: Array(bytes[(nul + 1)...]))
    }

    /// Parses `.debug_sup` (DWARF 5, 7.3.6): version (2 bytes, 5), is_supplementary (1 byte),
    /// a NUL-terminated file name, a ULEB128 checksum length and the checksum. Returns the link and
    /// whether the section marks the file itself as a supplementary file.
    static func parseDebugSup(_ bytes: [UInt8]) -> (link: SupplementaryLink, isSupplementary: Bool)? {
        guard bytes.count >= 4 else { return nil }
        let version = UInt16(bytes[0]) | UInt16(bytes[1]) << 8
        guard version == 5 else { return nil }
        let isSup = bytes[2] != 0
        guard let nul = bytes[3...].firstIndex(of: 0) else { return nil }
        let name = String(decoding: bytes[3..<nul], as: UTF8.self)
        var i = nul + 1, length: UInt64 = 0, shift: UInt64 = 0
        while i < bytes.count {
            let b = bytes[i]; i += 1
            guard shift < 64 else { return nil }
            length |= UInt64(b & 0x7f) << shift
            shift += 7
            if b & 0x80 == 0 { break }
        }
        guard length <= UInt64(bytes.count - i) else { return nil }
        let checksum = Array(bytes[i..<(i + Int(length))])
        return (SupplementaryLink(kind: .debugSup, name: name, identity: checksum), isSup)
    }
}

extension ELFHandle {
    /// The supplementary file this debug file needs, if any (a supplementary file itself has none).
    var supplementaryLink: SupplementaryLink? {
        for s in sections() where s.header.sh_type != SHT_NOBITS {
            guard s.name == ".gnu_debugaltlink" || s.name == ".debug_sup", let bytes = sectionBytes(s.scn) else { continue }
            if s.name == ".gnu_debugaltlink" { return SupplementaryLink.parseAltLink(bytes) }
            if let (link, isSup) = SupplementaryLink.parseDebugSup(bytes), !isSup { return link }
        }
        return nil
    }

    /// The identity a link to this file must carry: its build-id, else its own `.debug_sup` checksum.
    var supplementaryIdentities: [[UInt8]] {
        var ids: [[UInt8]] = []
        if let b = buildID { ids.append(b.bytes) }
        for s in sections() where s.name == ".debug_sup" && s.header.sh_type != SHT_NOBITS {
            if let bytes = sectionBytes(s.scn), let (link, isSup) = SupplementaryLink.parseDebugSup(bytes), isSup {
                ids.append(link.identity)
            }
        }
        return ids
    }

    private func sectionBytes(_ scn: OpaquePointer) -> [UInt8]? {
        // `objcopy --compress-debug-sections` compresses .debug_sup too: inflate it first.
        var sh = GElf_Shdr()
        if gelf_getshdr(scn, &sh) != nil, sh.sh_flags & UInt64(SHF_COMPRESSED) != 0, elf_compress(scn, 0, 0) < 0 { return nil }
        guard let data = elf_getdata(scn, nil), let buf = data.pointee.d_buf, data.pointee.d_size > 0 else { return nil }
        return Array(UnsafeRawBufferPointer(start: buf, count: Int(data.pointee.d_size)))
    }
}

/// An open supplementary file for libdw (`dwarf_setalt`). One per libdw session owner: libdw
/// handles are not shared between threads. `dwarf_end` of the main Dwarf does not end it.
final class SupplementaryDwarf {
    let dwarf: OpaquePointer
    private let fd: Int32
    /// The file is a DWARF 5 supplementary file (references to it are DW_FORM_ref_sup4/8).
    let isDebugSup: Bool

    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard let d = DWARFSession.begin(fd: fd) else { close(fd); return nil }
        self.fd = fd
        self.dwarf = d
        isDebugSup = (try? ELFHandle(path: path))?.sections().contains { $0.name == ".debug_sup" } ?? false
    }

    deinit {
        dwarf_end(dwarf)
        close(fd)
    }

    /// Opens `path` when given; nil otherwise or when unreadable.
    static func opening(_ path: String?) -> SupplementaryDwarf? { path.flatMap { SupplementaryDwarf(path: $0) } }
}
