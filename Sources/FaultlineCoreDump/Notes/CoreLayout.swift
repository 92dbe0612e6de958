// The ELF header and program headers of an x86_64 Linux core file (Elf64_Ehdr, Elf64_Phdr).
import FaultlineProtocol
import FoundationEssentials

/// What a core file is made of: its segments. Read from the first bytes of the file (the kernel
/// writes the header and the program headers first, then the notes, then memory).
public struct CoreLayout: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// `p_type`: PT_LOAD (1) is memory, PT_NOTE (4) the notes.
        public var type: UInt32
        public var flags: UInt32
        public var offset: UInt64
        public var virtualAddress: UInt64
        public var fileSize: UInt64
        public var memorySize: UInt64
        public var isLoad: Bool { type == CoreLayout.PT_LOAD }
        public var isNote: Bool { type == CoreLayout.PT_NOTE }
        public func contains(_ address: UInt64) -> Bool { address >= virtualAddress && address - virtualAddress < memorySize }
    }

    static let PT_LOAD: UInt32 = 1
    static let PT_NOTE: UInt32 = 4
    static let ET_CORE: UInt16 = 4
    /// The one architecture whose cores this reader reads (NT_PRSTATUS's register layout,
    /// CoreThreadSource's DWARF numbering); docs/AARCH64.md lists aarch64 cores as not yet read.
    public static let architecture: CPUArchitecture = .x86_64
    static let headerSize = 64
    static let programHeaderSize = 56
    /// e_phnum's escape value: the real count is in section header 0, which the kernel writes at
    /// the end of the file, out of reach of a reader that streams.
    static let PN_XNUM: UInt16 = 0xffff

    /// Offset of the program header table (e_phoff).
    public var programHeaderOffset: UInt64
    public var segments: [Segment]

    /// Where the program header table ends: how much of the file's start `parse` needs.
    public var headerEnd: UInt64 { programHeaderOffset + UInt64(segments.count) * UInt64(Self.programHeaderSize) }

    /// Whether `prefix` (a file's first bytes) begins an ELF core file of any machine.
    public static func isCore(prefix: [UInt8]) -> Bool {
        let b = CoreBytes(prefix)
        return prefix.starts(with: [0x7f, 0x45, 0x4c, 0x46]) && b.u16(16) == ET_CORE
    }

    /// The program header table's extent, from the ELF header alone (its first 64 bytes).
    public static func programHeaderTable(header: [UInt8]) throws(CoreDumpError) -> (offset: UInt64, count: Int) {
        let b = CoreBytes(header)
        guard header.count >= headerSize, header.starts(with: [0x7f, 0x45, 0x4c, 0x46]) else { throw .notACore("no ELF header") }
        guard header[4] == 2, header[5] == 1 else { throw .unsupported("not a 64-bit little-endian ELF file") }
        guard b.u16(16) == ET_CORE else { throw .notACore("ELF type \(b.u16(16) ?? 0), not ET_CORE") }
        guard b.u16(18) == architecture.elfMachine else {
            throw .unsupported("machine \(b.u16(18) ?? 0), only \(architecture.rawValue) cores are read")
        }
        guard let phoff = b.u64(32), let phentsize = b.u16(54), let phnum = b.u16(56) else { throw .notACore("truncated ELF header") }
        guard phentsize == programHeaderSize else { throw .notACore("program header size \(phentsize)") }
        guard phnum != PN_XNUM else { throw .unsupported("more than 65,534 mappings (PN_XNUM)") }
        // The kernel puts them right after the header; far away is a hostile or broken file.
        guard phoff >= UInt64(headerSize), phoff <= 1 << 20 else { throw .notACore("program headers at \(phoff)") }
        return (phoff, Int(phnum))
    }

    /// Reads the header and the program headers from `prefix`, which must reach `headerEnd`.
    public static func parse(prefix: [UInt8]) throws(CoreDumpError) -> CoreLayout {
        let table = try programHeaderTable(header: Array(prefix.prefix(headerSize)))
        let b = CoreBytes(prefix)
        var segments: [Segment] = []
        segments.reserveCapacity(table.count)
        for i in 0..<table.count {
            let at = Int(table.offset) + i * programHeaderSize
            guard let type = b.u32(at), let flags = b.u32(at + 4), let offset = b.u64(at + 8), let vaddr = b.u64(at + 16),
                let filesz = b.u64(at + 32), let memsz = b.u64(at + 40)
            else { throw .truncated("program header \(i) of \(table.count)") }
            segments.append(Segment(type: type, flags: flags, offset: offset, virtualAddress: vaddr, fileSize: filesz, memorySize: memsz))
        }
        return CoreLayout(programHeaderOffset: table.offset, segments: segments)
    }

    /// The bytes of one program header as `parse` reads it, with `fileSize` replaced: how a
    /// reduced copy marks a segment it did not keep (the kernel's own mark for memory it did not
    /// dump, e.g. a library's code).
    static func patchFileSize(_ fileSize: UInt64, ofSegment index: Int, in table: inout [UInt8], tableOffset: Int) {
        let at = tableOffset + index * programHeaderSize + 32
        guard at >= 0, at + 8 <= table.count else { return }
        for i in 0..<8 { table[at + i] = UInt8(truncatingIfNeeded: fileSize >> (8 * UInt64(i))) }
    }
}
