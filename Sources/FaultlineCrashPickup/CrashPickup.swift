// What one pass over the crash directory did.
import FoundationEssentials
import Glibc
import FaultlineProtocol

/// What one pass over the crash directory did.
public struct CrashPickup: Sendable, Equatable {
    public var converted: [String] = []  // event ids now in the outbox
    public var setAside: [String] = []  // corrupt reports moved to crashes/corrupt
    public var previousSessionCrashed: [String] = []  // session ids of the crashed runs
    public var stoppedEarly = false  // the consumer could not take one (disk trouble): the rest wait
    public init() {}
}
