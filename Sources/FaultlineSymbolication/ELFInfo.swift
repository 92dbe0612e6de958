// An ELF file's identity as the symbolicator and the server need it, read without DWARF.
import CDw
import FaultlineProtocol
#if canImport(Glibc)
    import Glibc
#endif

/// What the symbolicator and the server need to know about an ELF file without parsing DWARF.
public struct ELFInfo: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// An executable (including PIE executables, which have an interpreter).
        case executable
        /// A shared library (ET_DYN without an interpreter).
        case sharedObject
        /// A file made by `objcopy --only-keep-debug`: code sections are NOBITS.
        case debugOnly
        case relocatable
        case other
    }
    /// `.gnu_debuglink`: the separate debug file's name and the CRC32 of its contents.
    public struct DebugLink: Sendable, Hashable {
        public var name: String
        public var crc: UInt32
    }

    public var path: String
    public var buildID: BuildID?
    /// Has a non-empty `.debug_info` with contents (zlib-compressed counts).
    public var hasDebugInfo: Bool
    /// Has `.symtab` or `.dynsym` entries that name code.
    public var hasSymbols: Bool
    public var kind: Kind
    /// The header's `e_machine`. Any machine is read: symbolication is architecture-neutral
    /// (aarch64 files are symbolicated on x86_64 and the other way round).
    public var machine: UInt16
    /// The architecture, when `machine` is one Faultline's crash core runs on.
    public var architecture: CPUArchitecture? { CPUArchitecture(elfMachine: machine) }
    /// Lowest address the file asks to be mapped at (first PT_LOAD, page-aligned): module-relative
    /// addresses (Sentry's `instruction_addr - image_addr`) plus this are ELF virtual addresses.
    public var firstLoadAddress: UInt64
    public var debugLink: DebugLink?
    public var fileSize: UInt64
    /// How `.debug_info` is compressed: nil (not), "zlib", "zlib-gnu" (`.zdebug_*`) or "zstd".
    /// libdw 0.188 reads zlib only; zstd needs elfutils 0.189 or later.
    public var debugCompression: String?

    /// True when the file has DWARF that libdw 0.188 cannot decompress.
    public var hasUnreadableDebugInfo: Bool { hasDebugInfo && debugCompression == "zstd" }

    /// Reads the headers of `path`. Throws a clear `ELFError` for a missing file, a directory, a
    /// non-ELF or a truncated ELF; never crashes on bad input.
    public static func read(path: String) throws(ELFError) -> ELFInfo {
        let file = try ELFHandle(path: path)
        return try file.info()
    }
}
