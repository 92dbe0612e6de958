// How much of each thread's stack is walked and kept, and the keeper that holds to it.
import FoundationEssentials
import FaultlineProtocol

/// How much of a deep stack a report keeps: the innermost frames (where it crashed) and the
/// outermost (how the recursion began), as the crash core does (docs/CRASH-REPORT.md).
public struct FrameBudget: Sendable {
    public var innermost = 192
    public var outermost = 64
    /// Steps the unwinder may take on one thread before it stops with `limit`.
    public var maximumSteps = 500_000
    public init() {}
}

/// Collects a walk within a `FrameBudget`: the first `innermost` frames, and a ring of the last
/// `outermost` ones.
struct FrameKeeper {
    let budget: FrameBudget
    private(set) var inner: [FrameAddress] = []
    private var ring: [FrameAddress] = []
    private var ringStart = 0
    private(set) var walked = 0

    init(budget: FrameBudget) { self.budget = budget }

    var isFull: Bool { walked >= budget.maximumSteps }

    mutating func append(_ f: FrameAddress) {
        walked += 1
        if inner.count < budget.innermost { inner.append(f); return }
        guard budget.outermost > 0 else { return }
        if ring.count < budget.outermost { ring.append(f); return }
        ring[ringStart] = f
        ringStart = (ringStart + 1) % ring.count
    }

    /// The kept frames, innermost first, and the gap between the two parts when there is one.
    var result: (frames: [FrameAddress], omitted: FrameGap?) {
        let outer = Array(ring[ringStart...] + ring[..<ringStart])
        let gap = walked - inner.count - outer.count
        return (inner + outer, gap > 0 ? FrameGap(after: inner.count, count: gap) : nil)
    }
}
