// Writes small minidumps at test time, for what Crashpad's handler does not write (Breakpad's
// Linux streams, other CPUs' contexts) and for stacks laid out on purpose (frame-pointer chains,
// cycles, stacks full of return addresses).
import Foundation

struct MinidumpBuilder {
    private(set) var data = [UInt8](repeating: 0, count: 32)
    private var directory: [(type: UInt32, size: UInt32, rva: UInt32)] = []

    /// Appends bytes (4-aligned) and returns where they start.
    mutating func append(_ bytes: [UInt8]) -> UInt32 {
        while data.count % 4 != 0 { data.append(0) }
        let rva = UInt32(data.count)
        data += bytes
        return rva
    }

    mutating func stream(_ type: UInt32, _ bytes: [UInt8]) {
        let rva = append(bytes)
        directory.append((type, UInt32(bytes.count), rva))
    }

    /// The dump: header, the streams, the directory at the end.
    func finish() -> [UInt8] {
        var out = self
        var dir: [UInt8] = []
        for e in directory { dir += le32(e.type) + le32(e.size) + le32(e.rva) }
        let dirRVA = out.append(dir)
        let header = le32(0x504D_444D) + le32(0xA793) + le32(UInt32(directory.count)) + le32(dirRVA) + le32(0) + le32(1_700_000_000) + le64(0)
        out.data.replaceSubrange(0..<32, with: header)
        return out.data
    }

    /// An MDString (UTF-16LE with a byte length).
    mutating func string(_ s: String) -> UInt32 {
        let units = Array(s.utf16)
        return append(le32(UInt32(units.count * 2)) + units.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
    }

    /// An MD_CONTEXT_AMD64 with control and integer registers.
    mutating func amd64Context(rip: UInt64, rsp: UInt64, rbp: UInt64) -> (size: UInt32, rva: UInt32) {
        var c = [UInt8](repeating: 0, count: 1232)
        c.replaceSubrange(48..<52, with: le32(0x0010_0003))
        c.replaceSubrange(152..<160, with: le64(rsp))
        c.replaceSubrange(160..<168, with: le64(rbp))
        c.replaceSubrange(248..<256, with: le64(rip))
        return (1232, append(c))
    }

    struct Thread {
        var id: UInt32
        var stackStart: UInt64
        var stack: [UInt8]
        var context: (size: UInt32, rva: UInt32)
    }

    /// ThreadList and a MemoryList holding each thread's stack and the `extra` ranges.
    mutating func threads(_ threads: [Thread], extra: [(address: UInt64, bytes: [UInt8])] = []) {
        var list = le32(UInt32(threads.count))
        var memory = le32(UInt32(threads.count + extra.count))
        for t in threads {
            let stackRVA = append(t.stack)
            let descriptor = le64(t.stackStart) + le32(UInt32(t.stack.count)) + le32(stackRVA)
            list += le32(t.id) + le32(0) + le32(0) + le32(0) + le64(0) + descriptor + le32(t.context.size) + le32(t.context.rva)
            memory += descriptor
        }
        for range in extra {
            memory += le64(range.address) + le32(UInt32(range.bytes.count)) + le32(append(range.bytes))
        }
        stream(3, list)
        stream(5, memory)
    }

    /// ModuleList of (base, size, path, build-id) with BpEL records.
    mutating func modules(_ modules: [(base: UInt64, size: UInt32, path: String, buildID: [UInt8])]) {
        var list = le32(UInt32(modules.count))
        for m in modules {
            let name = string(m.path)
            let cv = le32(0x4270_454C) + m.buildID
            let cvRVA = append(cv)
            list += le64(m.base) + le32(m.size) + le32(0) + le32(0) + le32(name)
            list += [UInt8](repeating: 0, count: 52) + le32(UInt32(cv.count)) + le32(cvRVA) + le64(0) + le64(0) + le64(0)
        }
        stream(4, list)
    }

    /// MDRawSystemInfo: x86_64 (9) on Linux (0x8201).
    mutating func systemInfo(architecture: UInt16 = 9, version: String = "Linux 6.1.0 #1 SMP x86_64") {
        let csd = string(version)
        stream(
            7,
            le16(architecture) + le16(6) + le16(0) + [2, 0] + le32(6) + le32(1) + le32(0) + le32(0x8201) + le32(csd) + le16(0) + le16(0)
                + [UInt8](repeating: 0, count: 24))
    }

    /// MDRawExceptionStream for `thread`: signal, si_code, address, context.
    mutating func exception(thread: UInt32, signal: UInt32, code: UInt32, address: UInt64, context: (size: UInt32, rva: UInt32)) {
        var e = le32(thread) + le32(0) + le32(signal) + le32(code) + le64(0) + le64(address) + le32(0) + le32(0)
        e += [UInt8](repeating: 0, count: 120) + le32(context.size) + le32(context.rva)
        stream(6, e)
    }
}

func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) } }

/// A stack image: 64-bit words at offsets from its start.
func stackImage(size: Int, words: [Int: UInt64]) -> [UInt8] {
    var s = [UInt8](repeating: 0, count: size)
    for (offset, value) in words { s.replaceSubrange(offset..<offset + 8, with: le64(value)) }
    return s
}
