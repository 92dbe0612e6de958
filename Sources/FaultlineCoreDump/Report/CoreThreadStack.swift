// One thread's stack as the unwinder walked it: what the report is built from besides the notes
// and the modules (a plain value, so the report's rules hold without a core).
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
