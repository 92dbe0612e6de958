// The core's memory for the unwinder: the file mapped read-only, each dumped segment found by a
// binary search. libdwfl's own core reader (dwfl_core_file_attach) goes through
// elf_getdata_rawchunk, which in elfutils 0.188 searches every chunk read so far: a deep stack
// took time growing with the square of its depth (8,000 frames: seconds), here it grows linearly.
import FoundationEssentials
import Glibc

final class CoreMemory {
    private struct Range {
        var start: UInt64
        var length: UInt64
        var offset: UInt64
    }
    private let mapping: UnsafeRawPointer?
    private let mappedBytes: Int
    private let ranges: [Range]

    /// Maps `fd` (a core of `fileSize` bytes) and indexes `layout`'s dumped memory; a segment the
    /// file does not wholly hold (a cut core) is taken only as far as the file goes.
    init(fd: Int32, fileSize: UInt64, layout: CoreLayout) {
        let m = fileSize > 0 ? mmap(nil, Int(fileSize), PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED
        mapping = m == MAP_FAILED ? nil : UnsafeRawPointer(m)
        mappedBytes = mapping == nil ? 0 : Int(fileSize)
        ranges = layout.segments.compactMap { s -> Range? in
            guard s.isLoad, s.fileSize > 0, s.offset < fileSize else { return nil }
            return Range(start: s.virtualAddress, length: min(s.fileSize, fileSize - s.offset), offset: s.offset)
        }.sorted { $0.start < $1.start }
    }

    deinit {
        if let mapping { munmap(UnsafeMutableRawPointer(mutating: mapping), mappedBytes) }
    }

    /// The 8 bytes at `address`, or nil when the core did not dump them.
    func word(at address: UInt64) -> UInt64? {
        guard let mapping else { return nil }
        var low = 0
        var high = ranges.count
        while low < high {
            let mid = (low + high) / 2
            if ranges[mid].start <= address { low = mid + 1 } else { high = mid }
        }
        guard low > 0 else { return nil }
        let r = ranges[low - 1]
        let into = address - r.start
        guard into < r.length, r.length - into >= 8 else { return nil }
        return mapping.loadUnaligned(fromByteOffset: Int(r.offset + into), as: UInt64.self)
    }
}
