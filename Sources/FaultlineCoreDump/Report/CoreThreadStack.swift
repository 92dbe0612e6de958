// One thread's stack as the unwinder walked it, and a module as it was mapped: what the report
// is built from besides the notes (plain values, so the report's rules are testable without a core).
import FoundationEssentials
import FaultlineProtocol

public struct CoreThreadStack: Sendable, Equatable {
    public var tid: Int
    /// Innermost first; an activation (the interrupted instruction) is `.programCounter`, a
    /// caller's frame `.returnAddress`.
    public var frames: [FrameAddress]
    /// Frames walked but not kept between the innermost and the outermost (deep recursion).
    public var omitted: FrameGap?
    public var framesWalked: Int
    /// `end`, `limit` (the step cap), `deadline` (the time budget) or `error`.
    public var stoppedBy: String
    /// The unwinder's message when it stopped on an error.
    public var error: String?

    public init(tid: Int, frames: [FrameAddress], omitted: FrameGap? = nil, framesWalked: Int, stoppedBy: String, error: String? = nil) {
        self.tid = tid
        self.frames = frames
        self.omitted = omitted
        self.framesWalked = framesWalked
        self.stoppedBy = stoppedBy
        self.error = error
    }
}

/// Frames walked but not kept: `count` of them, before the frame at index `after` of the kept ones.
public struct FrameGap: Sendable, Equatable {
    public var after: Int
    public var count: Int
    public init(after: Int, count: Int) {
        self.after = after
        self.count = count
    }
}

public struct CoreModule: Sendable, Equatable {
    /// The path the process had it mapped from (NT_FILE), or the unwinder's name for it ([vdso]).
    public var path: String
    public var base: Address
    public var size: UInt64
    public var buildID: BuildID?

    public init(path: String, base: Address, size: UInt64, buildID: BuildID?) {
        self.path = path
        self.base = base
        self.size = size
        self.buildID = buildID
    }
}

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
