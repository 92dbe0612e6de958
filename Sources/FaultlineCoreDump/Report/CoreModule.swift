// A module as the unwinder found it mapped in the core (a plain value, like `CoreThreadStack`).
import FoundationEssentials
import FaultlineProtocol

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
