// A frame's address with its kind: program counter (exact) or return address (step back into the call before lookup).

/// One entry of a captured stack. Frame 0 of a crash is the exact faulting instruction; every
/// other frame is a return address, which points *after* the call, so lookups step back into the
/// call by the architecture's `callSiteBackstep` (1 on x86_64, 4 on aarch64).
public enum FrameAddress: Hashable, Sendable {
    case programCounter(Address)
    case returnAddress(Address)

    public var address: Address {
        switch self {
        case .programCounter(let a), .returnAddress(let a): return a
        }
    }
    /// The address to look up in debug info: inside the call instruction for return addresses.
    public func lookupAddress(on architecture: CPUArchitecture) -> Address {
        switch self {
        case .programCounter(let a): return a
        case .returnAddress(let a): return Address(architecture.callSite(ofReturnAddress: a.value))
        }
    }
    public var isReturnAddress: Bool { if case .returnAddress = self { return true } else { return false } }
}
