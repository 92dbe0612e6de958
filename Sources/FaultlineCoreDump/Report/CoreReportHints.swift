// What the kernel tells a core_pattern pipe handler besides the core (%P %i %s %t %e): used where
// the notes say nothing, and to pick the thread that took the signal.
import FoundationEssentials

public struct CoreReportHints: Sendable, Equatable {
    /// %P: the process id in the initial pid namespace.
    public var pid: Int?
    /// %i: the thread that took the signal (initial namespace).
    public var tid: Int?
    /// %s: the signal number.
    public var signal: Int?
    /// %t: when the core was written, seconds since the epoch.
    public var time: Double?
    /// %e: the crashing thread's name (comm).
    public var threadName: String?

    public init(pid: Int? = nil, tid: Int? = nil, signal: Int? = nil, time: Double? = nil, threadName: String? = nil) {
        self.pid = pid
        self.tid = tid
        self.signal = signal
        self.time = time
        self.threadName = threadName
    }
}
