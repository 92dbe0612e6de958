// How much freed memory glibc's malloc keeps at the top of a heap before handing it back to the
// kernel. At its default (128 KiB) the SQLite writer's heap crossed the line hundreds of times a
// second under load — memory SQLite frees as a grouping statement ends — and each time gave 20 KiB
// back with madvise (a TLB shootdown across the cores), to fault it in again moments later
// (docs/SERVER.md, "Measured"). A server runs for weeks with a steady working set, so it keeps up
// to `bytes` per heap; memory freed beyond that is still returned.
#if canImport(Glibc)
    import Glibc
#endif

public enum HeapTrimThreshold {
    /// Kept at a heap's top before trimming: well above one commit's churn, small beside the
    /// server's resident set even with a heap per core's worth of threads.
    public static let bytes: Int32 = 1 << 20

    /// glibc's `M_TRIM_THRESHOLD` (<malloc.h>, which Swift's Glibc module does not import).
    static let mallocTrimThresholdOption: Int32 = -1

    /// Sets the threshold for the whole process (`faultline serve` does, before it starts).
    /// Returns false where the C library has no such setting (`mallopt` is glibc's: found at run
    /// time, as the Glibc module does not declare it).
    @discardableResult
    public static func apply() -> Bool {
        #if canImport(Glibc)
            typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
            return unsafeBitCast(symbol, to: Mallopt.self)(mallocTrimThresholdOption, bytes) == 1
        #else
            return false
        #endif
    }
}
