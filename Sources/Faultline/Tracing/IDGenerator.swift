// Span and trace ids: SplitMix64 over an atomic counter.
import Synchronization

/// Span and trace ids come from SplitMix64 over one atomic counter seeded from the system's
/// random source: lock-free and a few nanoseconds, where the system generator is a syscall.
/// Ids need to be unique and unpredictable enough to sample on, not secret.
enum IDGenerator {
    private static let state = Atomic<UInt64>(UInt64.random(in: 1...UInt64.max))
    static func next() -> UInt64 {
        var z = state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Uniform in [0, 1), for the sampling decision.
    static func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }
}
