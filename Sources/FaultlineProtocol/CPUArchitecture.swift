// The CPU architectures crash reports come from: the one place in Swift that knows their names,
// their registers and how a return address becomes a call site.

/// The architecture of a crashed process: a crash report's top-level `arch`.
public enum CPUArchitecture: String, Sendable, Hashable, CaseIterable {
    case x86_64
    case aarch64

    /// Reports written before `arch` existed all came from x86_64 builds of the crash core.
    public static let ofReportsWithoutArch: CPUArchitecture = .x86_64
    /// An event that names no architecture (no `contexts.device.arch`, no image `arch`) is read
    /// as x86_64's, as every event was before aarch64 support: its grouping stays as it was.
    public static let ofEventsWithoutArch: CPUArchitecture = .x86_64

    /// The report's spelling (`uname -m`), or Sentry's (`arm64`, `amd64`); nil for others.
    public init?(name: String) {
        switch name {
        case "x86_64", "amd64": self = .x86_64
        case "aarch64", "arm64", "arm64e": self = .aarch64
        default: return nil
        }
    }

    /// The architecture of an ELF header's `e_machine` (EM_X86_64, EM_AARCH64); nil for others.
    public init?(elfMachine: UInt16) {
        guard let a = Self.allCases.first(where: { $0.elfMachine == elfMachine }) else { return nil }
        self = a
    }

    /// The ELF `e_machine` of this architecture's files.
    public var elfMachine: UInt16 {
        switch self {
        case .x86_64: 62  // EM_X86_64
        case .aarch64: 183  // EM_AARCH64
        }
    }

    /// The architecture this code was compiled for (the in-process SDK's own); nil on others,
    /// which the crash core does not support.
    public static var host: CPUArchitecture? {
        #if arch(x86_64)
            .x86_64
        #elseif arch(arm64)
            .aarch64
        #else
            nil
        #endif
    }

    /// Sentry's spelling, for `debug_meta.images[].arch` and `contexts.device.arch`.
    public var sentryName: String {
        switch self {
        case .x86_64: "x86_64"
        case .aarch64: "arm64"
        }
    }

    /// The general registers in the order the crash core writes them (Sources/CFaultlineCrash/machine_context.c).
    public var registerNames: [String] {
        switch self {
        case .x86_64:
            ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags"]
        case .aarch64:
            (0...30).map { "x\($0)" } + ["sp", "pc", "pstate"]
        }
    }

    /// The general registers in the order Swift's backtracer prints them in its JSON crash logs
    /// (SwiftBacktraceLog restores it: JSON objects lose their member order). x86_64's is read
    /// off real logs; aarch64's follows the backtracer's names (x0…x28, fp, lr, sp, pc) and has
    /// not been seen in a real aarch64 log here (no aarch64 Swift toolchain).
    public var swiftBacktracerRegisterNames: [String] {
        switch self {
        case .x86_64:
            ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "rflags", "cs", "fs", "gs"]
        case .aarch64:
            (0...28).map { "x\($0)" } + ["fp", "lr", "sp", "pc"]
        }
    }

    /// Debian's multiarch directory name (`/usr/lib/<tuple>/`), where a module's libraries live.
    public var multiarchTuple: String { rawValue + "-linux-gnu" }

    /// The register that holds the program counter.
    public var programCounterRegister: String {
        switch self {
        case .x86_64: "rip"
        case .aarch64: "pc"
        }
    }

    /// How far before a return address the call instruction starts, as Sentry adjusts a caller's
    /// `instruction_addr`: aarch64's `bl`/`blr` are 4 bytes; x86_64's calls vary in length, so
    /// one byte back is the only step known to land inside the call. Either lands inside the call,
    /// so a line-table lookup gives the caller's line on both.
    public var callSiteBackstep: UInt64 {
        switch self {
        case .x86_64: 1
        case .aarch64: 4
        }
    }

    /// Where the call that pushed `returnAddress` lies: the address to look up in debug info for a
    /// caller's frame. The one place the Swift side steps back from a return address.
    public func callSite(ofReturnAddress returnAddress: UInt64) -> UInt64 {
        returnAddress >= callSiteBackstep ? returnAddress - callSiteBackstep : returnAddress
    }
}
