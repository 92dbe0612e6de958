// The sampling decision for traces started in this process.
import CFaultlineCrash
import Foundation
import Synchronization

/// The sampling decision for a trace started here (`Options.tracesSampleRate`); a continued
/// trace keeps its caller's decision.
enum TraceSampler {
    static let rateBits = Atomic<UInt64>(1.0.bitPattern)
    static var rate: Double {
        get { Double(bitPattern: rateBits.load(ordering: .relaxed)) }
        set { rateBits.store(min(max(newValue, 0), 1).bitPattern, ordering: .relaxed) }
    }
    static func sample() -> Bool {
        let r = rate
        return r >= 1 || (r > 0 && IDGenerator.unit() < r)
    }
}
