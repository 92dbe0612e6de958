// The module list: each loaded image's base, size, path and identity (its CodeView record).
import FaultlineProtocol

/// One loaded image (executable, shared library, vdso).
public struct MinidumpModule: Hashable, Sendable {
    public var base: UInt64
    public var size: UInt64
    /// The path the process had it under (`module_name_rva`).
    public var path: String
    public var codeView: CodeView

    /// The module's identity record.
    public enum CodeView: Hashable, Sendable {
        /// `BpEL` (Breakpad/Crashpad on Linux): the ELF's GNU build-id.
        case elf(BuildID)
        /// `RSDS` (PDB 7.0): a GUID and an age; on Linux old Breakpad put a build-id's first 16 bytes here.
        case pdb70(guid: [UInt8], age: UInt32, file: String)
        /// No record, or a signature this reader does not know (kept, never an error).
        case unknown(signature: UInt32?)
    }

    /// The GNU build-id, when the record carries one.
    public var buildID: BuildID? { if case .elf(let id) = codeView { id } else { nil } }

    /// Whether `address` lies inside the image.
    public func contains(_ address: UInt64) -> Bool { address >= base && address - base < size }

    static let entrySize: UInt64 = 108
    static let elfSignature: UInt32 = 0x4270_454C  // "BpEL"
    static let pdb70Signature: UInt32 = 0x5344_5352  // "RSDS"
    /// Longer identity records are not build-ids anyone writes; a cap keeps a hostile one small.
    static let maxCodeViewSize: UInt32 = 4096

    static func readList(_ b: MinidumpBytes, _ s: MinidumpStreamEntry) throws(MinidumpError) -> [MinidumpModule] {
        guard s.size >= 4 else { throw .streamTooSmall(what: "module list", size: s.size, needed: 4) }
        let base = UInt64(s.rva)
        let n = try b.checkedCount(
            "module list", count: UInt64(try b.u32(base, "module list")), entrySize: entrySize, offset: base + 4,
            available: UInt64(s.size) - 4)
        var modules: [MinidumpModule] = []
        modules.reserveCapacity(n)
        for i in 0..<UInt64(n) {
            let e = base + 4 + i * entrySize
            modules.append(
                MinidumpModule(
                    base: try b.u64(e, "module"), size: UInt64(try b.u32(e + 8, "module")),
                    path: try b.utf16String(at: try b.u32(e + 20, "module"), "module name"),
                    codeView: try readCodeView(b, size: try b.u32(e + 76, "module"), rva: try b.u32(e + 80, "module"))))
        }
        return modules
    }

    static func readCodeView(_ b: MinidumpBytes, size: UInt32, rva: UInt32) throws(MinidumpError) -> CodeView {
        guard size >= 4 else { return .unknown(signature: nil) }
        guard size <= maxCodeViewSize else { throw .implausibleCount(what: "CodeView record bytes", count: UInt64(size), limit: UInt64(maxCodeViewSize)) }
        let record = try b.slice(UInt64(rva), UInt64(size), "CodeView record")
        let signature = try b.u32(UInt64(rva), "CodeView record")
        switch signature {
        case elfSignature:
            let id = Array(record.dropFirst(4))
            return id.isEmpty ? .unknown(signature: signature) : .elf(BuildID(bytes: id))
        case pdb70Signature where size >= 24:
            let guid = Array(record.dropFirst(4).prefix(16))
            let age = try b.u32(UInt64(rva) + 20, "CodeView record")
            let name = record.dropFirst(24).prefix(while: { $0 != 0 })
            return .pdb70(guid: guid, age: age, file: String(decoding: name, as: UTF8.self))
        default:
            return .unknown(signature: signature)
        }
    }
}
