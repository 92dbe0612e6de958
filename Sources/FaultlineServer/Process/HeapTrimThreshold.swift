// How much freed memory glibc's malloc keeps at the top of a heap before handing it back to the
// kernel. At its default (128 KiB) the SQLite writer's heap crossed the line again and again under
// load — memory SQLite frees as a grouping statement ends — and each time gave pages back with
// madvise (a TLB shootdown across the cores), to fault them in again moments later (docs/SERVER.md,
// "Measured", has the figures). A server runs for weeks with a steady working set, so it keeps up
// to `trimBytes` per heap; memory freed beyond that is still returned.
//
// Setting a threshold turns off glibc's own adjustment of both thresholds (after freeing a large
// mapped block it would raise the mmap threshold to its size and the trim threshold to twice that),
// which would otherwise leave every block of 128 KiB and more — a large upload's body, a minidump —
// to an mmap and munmap of its own (munmap: the same shootdown). So the mmap threshold is set too,
// at half the trim threshold, glibc's own ratio.
#if canImport(Glibc)
    import Glibc
#endif

public enum HeapTrimThreshold {
    /// Kept at a heap's top before trimming: well above one commit's churn, small beside the
    /// server's resident set even with a heap per core's worth of threads.
    public static let trimBytes: Int32 = 1 << 20
    /// Blocks of this size and more get a mapping of their own.
    public static let mmapBytes: Int32 = trimBytes / 2

    /// glibc's `M_TRIM_THRESHOLD` and `M_MMAP_THRESHOLD` (<malloc.h>, which Swift's Glibc module
    /// does not import).
    static let trimThresholdOption: Int32 = -1
    static let mmapThresholdOption: Int32 = -3

    /// Sets both thresholds for the whole process (`faultline serve` does, before it starts).
    /// Returns false where the C library has no such setting (`mallopt` is glibc's: found at run
    /// time, as the Glibc module does not declare it).
    @discardableResult
    public static func apply() -> Bool {
        #if canImport(Glibc)
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
            let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
            return mallopt(trimThresholdOption, trimBytes) == 1 && mallopt(mmapThresholdOption, mmapBytes) == 1
        #else
            return false
        #endif
    }
}
