// The CPU architectures crash reports come from: the one place in Swift that knows their names,
// their registers and how a return address becomes a call site.

/// The architecture of a crashed process: a crash report's top-level `arch`.
public enum CPUArchitecture: String, Sendable, Hashable, CaseIterable {
    case x86_64
    case aarch64

    /// Reports written before `arch` existed all came from x86_64 builds of the crash core.
    public static let ofReportsWithoutArch: CPUArchitecture = .x86_64

    /// The report's spelling (`uname -m`), or Sentry's (`arm64`, `amd64`); nil for others.
    public init?(name: String) {
        switch name {
        case "x86_64", "amd64": self = .x86_64
        case "aarch64", "arm64", "arm64e": self = .aarch64
        default: return nil
        }
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
}
