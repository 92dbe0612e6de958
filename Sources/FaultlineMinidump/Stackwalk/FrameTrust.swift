// How a walked frame was found, in Sentry's words (`trust` on a frame).
import FaultlineProtocol

/// How sure the walker is of a frame, best first.
public enum FrameTrust: String, Sendable, Hashable {
    /// The thread's saved registers: the program counter itself.
    case context
    /// Unwound with call-frame information (`.eh_frame` / `.debug_frame`) of the module it was in.
    case cfi
    /// Followed the frame-pointer chain (`rbp`) through captured stack memory.
    case fp
    /// A stack word that looks like a return address (points just after a call in a module's code).
    case scan
}

/// One frame of a walked thread, innermost first.
public struct WalkedFrame: Hashable, Sendable {
    /// The first frame's is the exact program counter; every other one a return address.
    public var address: FrameAddress
    public var trust: FrameTrust

    public init(address: FrameAddress, trust: FrameTrust) {
        self.address = address; self.trust = trust
    }
}

/// One thread after the walk.
public struct WalkedThread: Sendable {
    public var id: UInt32
    public var name: String?
    /// The thread the exception stream names.
    public var crashed: Bool
    /// Innermost first.
    public var frames: [WalkedFrame]
    /// The registers the walk started from (nil for a context of a CPU the walker does not know).
    public var registers: AMD64Context?
    /// Why the walk ended: "end of stack", "frame limit", or what the last unwinder could not do.
    public var stoppedBy: String
}

/// Every walked thread of one dump.
public struct MinidumpStackwalk: Sendable {
    /// In the dump's order, at most `MinidumpStackwalker.Limits.maxThreads`.
    public var threads: [WalkedThread]
    /// Threads the dump lists beyond the limit (not walked).
    public var threadsOmitted: Int

    public var crashingThread: WalkedThread? { threads.first { $0.crashed } }
}
