// Which addresses of a dumped process are code, and the bytes there: what the stack scan and the
// frame-pointer walk check a candidate return address against.
import CDw

/// The process's executable ranges (from the Linux maps stream when the dump has one, else from
/// the program headers of the module files found, else each module's whole range) and a reader
/// of the code bytes (captured memory first, then the module's file).
struct ModuleCode {
    struct CodeRange {
        var start: UInt64
        var end: UInt64
    }

    /// A module file's loadable segments, for reading its code by address.
    struct FileImage {
        var bias: UInt64
        /// `PT_LOAD`s: `memorySize` is how far the segment reaches in the process, `fileSize` how
        /// much of it the file holds (0 for a debug file's code: the program headers still tell
        /// where the code is).
        var segments: [(vaddr: UInt64, memorySize: UInt64, fileSize: UInt64, offset: UInt64, executable: Bool)]
        var bytes: UnsafeRawBufferPointer
        /// False for a separate debug file (`objcopy --only-keep-debug`): its program headers are
        /// the executable's, but its code sections are NOBITS, so the bytes at a segment's file
        /// offset are something else and must never be read as instructions.
        var holdsCode: Bool
    }

    private var ranges: [CodeRange] = []
    private var images: [(start: UInt64, end: UInt64, image: FileImage)] = []

    init(dump: Minidump, files: [Int: FileImage]) {
        for (i, m) in dump.modules.enumerated() {
            guard let f = files[i] else { continue }
            images.append((m.base, m.base &+ m.size, f))
        }
        images.sort { $0.start < $1.start }
        let maps = dump.linux.executableRanges
        if !maps.isEmpty {
            ranges = maps.map { CodeRange(start: $0.start, end: $0.end) }
        } else {
            for (i, m) in dump.modules.enumerated() {
                if let f = files[i] {
                    for s in f.segments where s.executable {
                        ranges.append(CodeRange(start: s.vaddr &+ f.bias, end: s.vaddr &+ f.bias &+ s.memorySize))
                    }
                } else if m.size > 0 {
                    ranges.append(CodeRange(start: m.base, end: m.base &+ m.size))
                }
            }
        }
        ranges.sort { $0.start < $1.start }
    }

    /// Whether `address` lies in an executable range.
    func isCode(_ address: UInt64) -> Bool {
        var lo = 0, hi = ranges.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if ranges[mid].start <= address { lo = mid + 1 } else { hi = mid }
        }
        var i = lo - 1
        while i >= 0 && lo - i <= 8 {
            if address >= ranges[i].start && address < ranges[i].end { return true }
            i -= 1
        }
        return false
    }

    /// Whether the bytes before `returnAddress` end with a call instruction; nil when the bytes
    /// are neither in the dump nor in a module file found for it.
    func followsCall(_ returnAddress: UInt64, memory: MinidumpMemory) -> Bool? {
        guard returnAddress >= 7 else { return false }
        if let b = memory.read(address: returnAddress - 7, count: 7) { return CallInstruction.endsWithCall(b) }
        guard let b = fileBytes(at: returnAddress - 7, count: 7) else { return nil }
        return CallInstruction.endsWithCall(b[...])
    }

    private func fileBytes(at address: UInt64, count: UInt64) -> [UInt8]? {
        guard let entry = images.last(where: { $0.start <= address }), address < entry.end else { return nil }
        let f = entry.image
        guard f.holdsCode else { return nil }
        let relative = address &- f.bias
        for s in f.segments where relative >= s.vaddr && relative - s.vaddr <= s.fileSize && s.fileSize - (relative - s.vaddr) >= count {
            // Program headers come from an uploaded file: an offset may be anything.
            let (offset, overflow) = s.offset.addingReportingOverflow(relative - s.vaddr)
            guard !overflow, offset <= UInt64(f.bytes.count), UInt64(f.bytes.count) - offset >= count else { return nil }
            return Array(f.bytes[Int(offset)..<Int(offset + count)])
        }
        return nil
    }

    /// The segments and bytes of the ELF libdwfl opened for a module.
    static func image(of module: OpaquePointer) -> FileImage? {
        var bias: Dwarf_Addr = 0
        guard let elf = dwfl_module_getelf(module, &bias) else { return nil }
        var size = 0
        guard let raw = elf_rawfile(elf, &size), size > 0 else { return nil }
        var count = 0
        guard elf_getphdrnum(elf, &count) == 0 else { return nil }
        var segments: [(UInt64, UInt64, UInt64, UInt64, Bool)] = []
        for i in 0..<min(count, 256) {
            var ph = GElf_Phdr()
            guard gelf_getphdr(elf, Int32(i), &ph) != nil, ph.p_type == UInt32(PT_LOAD) else { continue }
            segments.append((ph.p_vaddr, ph.p_memsz, ph.p_filesz, ph.p_offset, ph.p_flags & UInt32(PF_X) != 0))
        }
        return FileImage(bias: bias, segments: segments, bytes: UnsafeRawBufferPointer(start: raw, count: size), holdsCode: holdsCode(elf))
    }

    /// Whether the file's code sections have their bytes (none of them is NOBITS).
    private static func holdsCode(_ elf: OpaquePointer) -> Bool {
        var section = elf_nextscn(elf, nil)
        var seen = 0
        while let s = section, seen < 65_536 {
            var header = GElf_Shdr()
            if gelf_getshdr(s, &header) != nil, header.sh_flags & UInt64(SHF_EXECINSTR) != 0, header.sh_type == UInt32(SHT_NOBITS) {
                return false
            }
            seen += 1
            section = elf_nextscn(elf, s)
        }
        return true
    }
}
