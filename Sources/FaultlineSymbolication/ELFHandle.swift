// Reading an ELF file through libelf: identity (build-id), kind, load address, debuglink, symbols.
import CDw
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// Why an ELF file could not be read. Messages say what was wrong and what to do.
public enum ELFError: Error, CustomStringConvertible, Sendable, Equatable {
    case notFound(String)
    case isDirectory(String)
    case unreadable(String, String)
    case notELF(String)
    case truncated(String)
    case malformed(String, String)
    /// An object file not yet linked (ET_REL): libdw reads its DWARF without applying the
    /// relocations, so every address in it would be wrong.
    case relocatable(String)

    public var description: String {
        switch self {
        case .notFound(let p): return "\(p): no such file"
        case .isDirectory(let p): return "\(p): is a directory, expected an ELF file"
        case .unreadable(let p, let why): return "\(p): cannot read (\(why))"
        case .notELF(let p): return "\(p): not an ELF file"
        case .truncated(let p): return "\(p): truncated ELF file (sections or headers lie beyond the end of the file)"
        case .malformed(let p, let why): return "\(p): malformed ELF file (\(why))"
        case .relocatable(let p):
            return "\(p): a relocatable object file (.o), whose debug information is not yet relocated; symbolicate the linked executable or library"
        }
    }
}

/// An open ELF file (libelf handle over a read-only descriptor); closes both on deinit.
/// Not thread-safe; used by one thread while an index is being built or an identity read.
final class ELFHandle {
    let path: String
    let fd: Int32
    let elf: OpaquePointer
    let fileSize: UInt64

    init(path: String) throws(ELFError) {
        self.path = path
        var st = stat()
        if stat(path, &st) != 0 {
            if errno == ENOENT || errno == ENOTDIR { throw .notFound(path) }
            throw .unreadable(path, String(cString: strerror(errno)))
        }
        if (st.st_mode & S_IFMT) == S_IFDIR { throw .isDirectory(path) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 { throw .unreadable(path, String(cString: strerror(errno))) }
        elf_version(UInt32(EV_CURRENT))
        guard let elf = elf_begin(fd, ELF_C_READ_MMAP, nil) else {
            close(fd)
            throw .notELF(path)
        }
        guard elf_kind(elf) == ELF_K_ELF else {
            elf_end(elf); close(fd)
            throw .notELF(path)
        }
        self.fd = fd
        self.elf = elf
        self.fileSize = UInt64(st.st_size)
        try checkBounds()
    }

    deinit {
        elf_end(elf)
        close(fd)
    }

    /// libelf maps lazily, so a truncated file only fails when a section is read; check every
    /// header and section extent up front so later code can trust them.
    private func checkBounds() throws(ELFError) {
        var ehdr = GElf_Ehdr()
        guard gelf_getehdr(elf, &ehdr) != nil else { throw .truncated(path) }
        // Every sum is checked: a hostile header with offsets near 2^64 must be an error, not a trap
        // (the server parses uploads with this on an HTTP thread).
        func fits(_ offset: UInt64, _ length: UInt64) -> Bool {
            let (end, overflow) = offset.addingReportingOverflow(length)
            return !overflow && end <= UInt64(fileSize)
        }
        if !fits(UInt64(ehdr.e_shoff), UInt64(ehdr.e_shnum) * UInt64(ehdr.e_shentsize))
            || !fits(UInt64(ehdr.e_phoff), UInt64(ehdr.e_phnum) * UInt64(ehdr.e_phentsize))
        {
            throw .truncated(path)
        }
        var scn: OpaquePointer? = nil
        while let s = elf_nextscn(elf, scn) {
            scn = s
            var sh = GElf_Shdr()
            guard gelf_getshdr(s, &sh) != nil else { throw .malformed(path, "unreadable section header") }
            if sh.sh_type != SHT_NOBITS && !fits(UInt64(sh.sh_offset), UInt64(sh.sh_size)) {
                throw .truncated(path)
            }
        }
    }

    var header: GElf_Ehdr {
        var ehdr = GElf_Ehdr()
        _ = gelf_getehdr(elf, &ehdr)
        return ehdr
    }

    var buildID: BuildID? {
        var p: UnsafeRawPointer? = nil
        let n = dwelf_elf_gnu_build_id(elf, &p)
        guard n > 0, let p else { return nil }
        return BuildID(bytes: Array(UnsafeRawBufferPointer(start: p, count: n)))
    }

    var debugLink: ELFInfo.DebugLink? {
        var crc: GElf_Word = 0
        guard let name = dwelf_elf_gnu_debuglink(elf, &crc) else { return nil }
        return ELFInfo.DebugLink(name: String(cString: name), crc: crc)
    }

    /// Sections by name, with their headers.
    func sections() -> [(name: String, header: GElf_Shdr, scn: OpaquePointer)] {
        var shstrndx = 0
        guard elf_getshdrstrndx(elf, &shstrndx) == 0 else { return [] }
        var out: [(String, GElf_Shdr, OpaquePointer)] = []
        var scn: OpaquePointer? = nil
        while let s = elf_nextscn(elf, scn) {
            scn = s
            var sh = GElf_Shdr()
            guard gelf_getshdr(s, &sh) != nil else { continue }
            let name = elf_strptr(elf, shstrndx, Int(sh.sh_name)).map { String(cString: $0) } ?? ""
            out.append((name, sh, s))
        }
        return out
    }

    var firstLoadAddress: UInt64 {
        var n = 0
        guard elf_getphdrnum(elf, &n) == 0 else { return 0 }
        for i in 0..<n {
            var ph = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(i), &ph) != nil else { continue }
            // The image base a loader reports is the page holding the first segment's start.
            if ph.p_type == PT_LOAD { return (ph.p_vaddr &- ph.p_offset) & ~UInt64(0xfff) }
        }
        return 0
    }

    var hasInterpreter: Bool {
        var n = 0
        guard elf_getphdrnum(elf, &n) == 0 else { return false }
        for i in 0..<n {
            var ph = GElf_Phdr()
            if gelf_getphdr(elf, Int32(i), &ph) != nil, ph.p_type == PT_INTERP { return true }
        }
        return false
    }

    func info() throws(ELFError) -> ELFInfo {
        let secs = sections()
        let ehdr = header
        var hasDebug = false, hasSyms = false, textIsNobits = false
        var compression: String? = nil
        for s in secs {
            switch s.name {
            case ".debug_info", ".zdebug_info":
                hasDebug = s.header.sh_type != SHT_NOBITS && s.header.sh_size > 0
                if s.name == ".zdebug_info" { compression = "zlib-gnu" }
                if hasDebug && s.header.sh_flags & UInt64(SHF_COMPRESSED) != 0 {
                    var chdr = GElf_Chdr()
                    if gelf_getchdr(s.scn, &chdr) != nil {
                        // ELFCOMPRESS_ZLIB = 1, ELFCOMPRESS_ZSTD = 2 (the latter not in 0.188's headers).
                        compression = chdr.ch_type == 1 ? "zlib" : chdr.ch_type == 2 ? "zstd" : "type \(chdr.ch_type)"
                    }
                }
            case ".symtab", ".dynsym":
                if s.header.sh_type != SHT_NOBITS && s.header.sh_size > UInt64(s.header.sh_entsize) { hasSyms = true }
            case ".text":
                textIsNobits = s.header.sh_type == SHT_NOBITS
            default: break
            }
        }
        let kind: ELFInfo.Kind
        switch Int32(ehdr.e_type) {
        case ET_EXEC: kind = textIsNobits ? .debugOnly : .executable
        case ET_DYN: kind = textIsNobits ? .debugOnly : (hasInterpreter ? .executable : .sharedObject)
        case ET_REL: kind = .relocatable
        default: kind = .other
        }
        return ELFInfo(
            path: path, buildID: buildID, hasDebugInfo: hasDebug, hasSymbols: hasSyms, kind: kind, machine: ehdr.e_machine,
            firstLoadAddress: firstLoadAddress, debugLink: debugLink, fileSize: fileSize,
            debugCompression: compression)
    }
}
