// A core read from a pipe into a reduced copy on disk that libdwfl can read: the header, the
// notes and only the memory an unwinder needs — each thread's stack and the small segments (the
// first page of every mapped ELF file, where its build-id is) — at their own offsets in a sparse
// file. The segments left out get p_filesz 0, the kernel's own mark for memory it did not dump,
// so a reader sees them as absent, never as zeros. Memory use stays one chunk plus the notes,
// disk use what is kept, whatever the size of the core.
import FoundationEssentials
import FaultlineFiles
import Glibc

public struct ReducedCoreLimits: Sendable {
    /// At most this many bytes of memory segments are kept in all.
    public var maximumKeptBytes: UInt64 = 512 << 20
    /// A segment up to this size is kept whether or not a stack is in it (ELF headers, the vDSO).
    public var smallSegmentBytes: UInt64 = 64 << 10
    public init() {}
}

struct ReducedCore {
    var layout: CoreLayout
    var notes: CoreNotes
    var bytesRead: UInt64
    var segmentsNotKept: Int
    /// Bytes of memory segments written to the copy (the disk it took, with the notes).
    var bytesKept: UInt64
    /// Why the copy lacks segments it would have kept (the input ended, the deadline passed).
    var incomplete: String?
}

enum ReducedCoreSpool {
    /// Reads the core from `stream` into `path` (created, mode 0600).
    static func spool(from stream: CoreStream, to path: String, limits: ReducedCoreLimits) throws(CoreDumpError) -> ReducedCore {
        guard let header = stream.read(CoreLayout.headerSize) else { throw .truncated("ELF header (\(stream.position) bytes read)") }
        let table = try CoreLayout.programHeaderTable(header: header)
        guard let rest = stream.read(Int(table.offset) + table.count * CoreLayout.programHeaderSize - header.count) else {
            throw .truncated("program headers")
        }
        var prefix = header + rest
        let layout = try CoreLayout.parse(prefix: prefix)

        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io("cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var notes = CoreNotes()
        var notesSeen = false
        var kept: UInt64 = 0
        var notKept = 0
        var incomplete: String?
        // In file order: the stream cannot go back.
        let order = layout.segments.indices.filter { layout.segments[$0].fileSize > 0 }.sorted { layout.segments[$0].offset < layout.segments[$1].offset }
        for i in order {
            let s = layout.segments[i]
            var keep = incomplete == nil && s.offset >= stream.position
            if keep && s.isNote {
                keep = s.fileSize <= UInt64(CoreNotes.maximumBytes)
            } else if keep {
                let holdsStack = notes.threads.contains { Self.holdsStack(s, stackPointer: $0.stackPointer) }
                // Before the notes (not where the kernel puts them) every segment counts as a stack.
                keep = (holdsStack || !notesSeen || s.fileSize <= limits.smallSegmentBytes) && s.fileSize <= limits.maximumKeptBytes - kept
            }
            if keep {
                _ = stream.forward(s.offset - stream.position) { _ in }
                var bytes: [UInt8] = []
                var written: UInt64 = 0
                var failure: String?
                let whole = stream.forward(s.fileSize) { chunk in
                    if s.isNote { bytes.append(contentsOf: chunk) }
                    if failure == nil, !Self.pwriteAll(fd, chunk, at: s.offset + written) { failure = String(cString: strerror(errno)) }
                    written += UInt64(chunk.count)
                }
                if let failure { throw .io("cannot write \(path): \(failure)") }
                if whole {
                    if s.isNote {
                        notes.add(segment: bytes)
                        notesSeen = true
                    } else {
                        kept += s.fileSize
                    }
                    continue
                }
                incomplete = stream.timedOut ? "the time budget ran out after \(stream.position) bytes" : "the core ended at \(stream.position) bytes"
            }
            notKept += s.isNote ? 0 : 1
            CoreLayout.patchFileSize(0, ofSegment: i, in: &prefix, tableOffset: Int(table.offset))
        }
        guard Self.pwriteAll(fd, prefix, at: 0) else { throw .io("cannot write \(path): \(String(cString: strerror(errno)))") }
        return ReducedCore(layout: layout, notes: notes, bytesRead: stream.position, segmentsNotKept: notKept, bytesKept: kept, incomplete: incomplete)
    }

    /// Whether `s` is the stack `stackPointer` points into; a thread that overflowed its stack
    /// points just below it (into the guard gap), so that counts too.
    static func holdsStack(_ s: CoreLayout.Segment, stackPointer sp: UInt64) -> Bool {
        s.contains(sp) || (sp < s.virtualAddress && s.virtualAddress - sp <= 64 << 10)
    }

    private static func pwriteAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: UInt64) -> Bool {
        var done = 0
        while done < bytes.count {
            let n = retryingOnInterrupt { pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done)) }
            guard n > 0 else { return false }
            done += n
        }
        return true
    }

    private static func pwriteAll(_ fd: Int32, _ bytes: [UInt8], at offset: UInt64) -> Bool {
        bytes.withUnsafeBytes { pwriteAll(fd, $0, at: offset) }
    }
}
